/** Members (admins): invite by e-mail, change role and provider flag, remove; the last admin stays. */
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useNavigate } from '@tanstack/react-router';
import { type RefObject, useEffect, useRef, useState } from 'react';
import { Switch } from 'react-aria-components';
import { z } from 'zod';
import { ApiError, api, describeError, moveSession } from '../../api.js';
import { EmptyState, ErrorNotice, Loading } from '../../components/status.js';
import { Button } from '../../components/ui/button.js';
import { AppDialog, ConfirmDialog } from '../../components/ui/dialog.js';
import { applyProblem, CheckboxInput, FormError, TextInput, useZodForm } from '../../components/ui/form.js';
import { notifySuccess } from '../../components/ui/toast.js';
import { useCurrentMe } from '../../me-context.js';
import { type Me, meQueryKey } from '../../session.js';
import { formatDateTime } from '../patients/patients-api.js';
import {
  adminKeys,
  type CalendarConnection,
  useCalendarConnections,
  useInvite,
  useMembers,
  useRemoveMember,
  useUpdateMember,
  type WorkspaceMember,
} from './admin-api.js';

const LAST_ADMIN = 'A workspace needs at least one admin: make someone else an admin first.';

export function MembersPage() {
  const members = useMembers();
  const [inviting, setInviting] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <div>
          <h1 id="page-title" tabIndex={-1} ref={heading}>
            Members
          </h1>
          <p className="muted">Who works in this workspace, and what they may do.</p>
        </div>
        <Button onPress={() => setInviting(true)} data-testid="invite-member">
          Invite someone
        </Button>
      </header>
      <InviteDialog isOpen={inviting} onOpenChange={setInviting} />
      <div className="card">
        {members.isPending ? <Loading label="Loading members…" /> : null}
        {members.isError ? <ErrorNotice error={members.error} onRetry={() => members.refetch()} /> : null}
        {members.isSuccess && members.data.items.length === 0 ? <EmptyState title="No members" /> : null}
        {members.isSuccess && members.data.items.length > 0 ? (
          <MemberTable members={members.data.items} heading={heading} />
        ) : null}
      </div>
    </section>
  );
}

function MemberTable({
  members,
  heading,
}: {
  members: WorkspaceMember[];
  heading: RefObject<HTMLHeadingElement | null>;
}) {
  const actionCells = useRef(new Map<string, HTMLTableCellElement>());
  // Removing a member disconnects the calendar accounts they connected here: the confirmation names them.
  const connections = useCalendarConnections();
  // A removed member's row goes with its Remove button and the dialog that would have given the focus back
  // to it; the focus moves on to the next row's Remove (the previous one's after the last row, else the title).
  const removedAt = useRef<{ userId: string; index: number } | null>(null);
  useEffect(() => {
    const removed = removedAt.current;
    if (!removed || members.some((m) => m.userId === removed.userId)) return;
    removedAt.current = null;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    const next = members[removed.index] ?? members[removed.index - 1];
    const target = next ? actionCells.current.get(next.userId)?.querySelector('button') : undefined;
    (target ?? heading.current)?.focus();
  }, [members, heading]);
  return (
    <div className="table-wrap">
      <table className="table table-stack" data-testid="members-table">
        <caption className="visually-hidden">Members of this workspace</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Provider</th>
            <th scope="col" className="col-updated">
              Last sign-in
            </th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.map((m) => (
            <MemberRow
              key={m.userId}
              member={m}
              calendars={connections.data?.items.filter((c) => c.userId === m.userId) ?? []}
              onConfirmRemoval={() => void connections.refetch()}
              actionsRef={(cell) => {
                if (cell) actionCells.current.set(m.userId, cell);
                else actionCells.current.delete(m.userId);
              }}
              onRemoved={() => {
                removedAt.current = { userId: m.userId, index: members.indexOf(m) };
              }}
            />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function MemberRow({
  member,
  calendars,
  onConfirmRemoval,
  actionsRef,
  onRemoved,
}: {
  member: WorkspaceMember;
  /** The calendar accounts this member connected in the workspace (disconnected when they are removed). */
  calendars: CalendarConnection[];
  /** The Remove confirmation opens: the calendar accounts are read again, so it names the current ones. */
  onConfirmRemoval: () => void;
  /** The cell holding the Remove button (the dialog is portalled elsewhere). */
  actionsRef: (cell: HTMLTableCellElement | null) => void;
  onRemoved: () => void;
}) {
  const me = useCurrentMe();
  const update = useUpdateMember();
  const roleChange = useUpdateMember();
  const isMe = member.userId === me.user.id;
  const removeOther = useRemoveMember();
  const leave = useLeaveWorkspace();
  // Removing yourself is leaving: asked and answered in your own words, and you move on to a workspace you still have.
  const remove = isMe ? leave : removeOther;
  const resend = useResendInvitation();
  const [confirming, setConfirming] = useState(false);
  // Granting or taking away Admin is asked first; the select shows the member's role until it is confirmed.
  const [newRole, setNewRole] = useState<'admin' | 'member' | null>(null);
  // What was refused, kept next to the member. A refusal inside a dialog is read out there (the dialog
  // says it): here it shows, unannounced, once the dialog is closed, so it is not heard twice.
  const [problem, setProblem] = useState<{ text: string; fromDialog: boolean } | null>(null);
  const explain = (fromDialog: boolean) => (error: unknown) =>
    setProblem({
      text: error instanceof ApiError && error.code === 'last_admin' ? LAST_ADMIN : describeError(error),
      fromDialog,
    });
  const roleQuestion = roleConfirmation(member, newRole, isMe);
  const removal = removalQuestion(member, calendars, isMe ? me : null);
  return (
    <tr data-testid="member-row" data-user-id={member.userId}>
      <th scope="row" className="cell-name">
        <span>{member.name}</span>
        {isMe ? <span className="muted"> (you)</span> : null}
        {member.status === 'invited' ? <span className="status-pill status-warn member-status">Invited</span> : null}
        {member.email ? <span className="muted cell-sub">{member.email}</span> : null}
        {problem && !(problem.fromDialog && (confirming || newRole !== null)) ? (
          <span
            className="field-error cell-sub"
            role={problem.fromDialog ? undefined : 'alert'}
            data-testid="member-error"
          >
            {problem.text}
          </span>
        ) : null}
      </th>
      <td data-label="Role">
        <label className="visually-hidden" htmlFor={`role-${member.userId}`}>
          Role of {member.name}
        </label>
        {/* Never disabled while saving: a disabled control drops the keyboard focus to the page. */}
        <select
          id={`role-${member.userId}`}
          value={member.role}
          aria-busy={roleChange.isPending || undefined}
          data-testid="member-role"
          onChange={(e) => {
            const role = e.target.value as 'admin' | 'member';
            if (role === member.role || roleChange.isPending) return;
            setProblem(null);
            roleChange.reset();
            setNewRole(role);
          }}
        >
          <option value="admin">Admin</option>
          <option value="member">Member</option>
        </select>
        <ConfirmDialog
          title={roleQuestion.title}
          description={roleQuestion.description}
          confirmLabel={roleQuestion.confirmLabel}
          confirmVariant={newRole === 'admin' ? 'primary' : 'danger'}
          isOpen={newRole !== null}
          onOpenChange={(open) => {
            if (!open) setNewRole(null);
          }}
          pending={roleChange.isPending}
          confirmTestId="confirm-role"
          error={inWords(roleChange.error)}
          errorTitle="The role was not changed"
          onConfirm={() => {
            if (!newRole) return;
            roleChange.mutate(
              { userId: member.userId, role: newRole },
              {
                onSuccess: () => {
                  setNewRole(null);
                  notifySuccess(`${member.name} is now ${newRole === 'admin' ? 'an admin' : 'a member'}.`);
                },
                onError: explain(true),
              },
            );
          }}
        />
      </td>
      <td data-label="Provider">
        <Switch
          className="switch"
          isSelected={member.isProvider}
          onChange={(isProvider) =>
            update.mutate(
              { userId: member.userId, isProvider },
              {
                onSuccess: () =>
                  notifySuccess(
                    isProvider ? `${member.name} is now a provider.` : `${member.name} is no longer a provider.`,
                  ),
                onError: explain(false),
              },
            )
          }
          data-testid="member-provider"
        >
          <span className="switch-track" aria-hidden="true">
            <span className="switch-thumb" />
          </span>
          <span className="visually-hidden">{member.name} is a provider: appointments can be booked with them</span>
        </Switch>
      </td>
      <td className="muted nowrap col-updated" data-label="Last sign-in">
        {member.lastSignInAt ? formatDateTime(member.lastSignInAt) : 'Never'}
      </td>
      <td className="cell-actions" ref={actionsRef}>
        {member.status === 'invited' ? (
          // Never disabled while sending: a disabled button drops the keyboard focus to the page; the focus stays here.
          <Button
            variant="secondary"
            size="small"
            aria-busy={resend.isPending || undefined}
            onPress={() => {
              if (resend.isPending) return;
              setProblem(null);
              resend.mutate(member.userId, {
                onSuccess: () =>
                  notifySuccess(
                    'Invitation sent again',
                    `${member.name} gets a new link, valid for 7 days; the link in the earlier e-mail no longer works.`,
                  ),
                onError: explain(false),
              });
            }}
            data-testid="member-resend"
            aria-label={`Resend the invitation to ${member.name}`}
          >
            Resend
          </Button>
        ) : null}
        <Button
          variant="secondary"
          size="small"
          onPress={() => {
            setProblem(null);
            remove.reset();
            onConfirmRemoval();
            setConfirming(true);
          }}
          data-testid="member-remove"
          aria-label={`Remove ${member.name}`}
        >
          Remove
        </Button>
        <ConfirmDialog
          title={removal.title}
          description={removal.description}
          confirmLabel={removal.confirmLabel}
          cancelLabel={removal.cancelLabel}
          isOpen={confirming}
          onOpenChange={setConfirming}
          pending={remove.isPending}
          confirmTestId="confirm-remove"
          error={inWords(remove.error)}
          errorTitle={removal.errorTitle}
          onConfirm={() => {
            if (isMe) {
              leave.mutate(member.userId, { onError: explain(true) });
              return;
            }
            // What the question named is what went with them (the removal answers 204, nothing more).
            const disconnected = calendars.length;
            removeOther.mutate(member.userId, {
              onSuccess: () => {
                onRemoved();
                setConfirming(false);
                notifySuccess(
                  member.status === 'invited'
                    ? `The invitation for ${member.name} was cancelled.`
                    : disconnected === 0
                      ? `${member.name} was removed from the workspace.`
                      : `${member.name} was removed from the workspace; ${disconnected} calendar ${
                          disconnected === 1 ? 'account' : 'accounts'
                        } disconnected.`,
                );
              },
              onError: explain(true),
            });
          }}
        />
      </td>
    </tr>
  );
}

const PROVIDER_NAMES: Record<string, string> = { google: 'Google', microsoft: 'Microsoft' };

/** "a, b and c" */
const listInWords = (items: string[]) =>
  items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;

/**
 * What removing a member ends: their credentials, and the calendar accounts they connected here, whose
 * appointments leave the workspace's calendar with them (docs/calendar.md, "A removed member's accounts").
 * `you`: said to the member removing themself.
 */
export function removalDescription(calendars: CalendarConnection[], you = false): string {
  const ends = you
    ? 'Your sessions, API tokens and open streams here stop working, and only an admin can invite you back.'
    : 'Their sessions, API tokens and open streams in this workspace stop working at once.';
  if (calendars.length === 0) return ends;
  const whose = you ? 'Your' : 'Their';
  const accounts = listInWords(calendars.map((c) => `${c.accountEmail} (${PROVIDER_NAMES[c.provider] ?? c.provider})`));
  return calendars.length === 1
    ? `${ends} ${whose} connected calendar ${accounts} will be disconnected: its appointments leave the clinic calendar until someone connects that account again.`
    : `${ends} ${whose} connected calendars ${accounts} will be disconnected: their appointments leave the clinic calendar until someone connects those accounts again.`;
}

/** The question asked before a member is removed; `me` when it is the reader's own row (leaving the workspace). */
function removalQuestion(member: WorkspaceMember, calendars: CalendarConnection[], me: Me | null) {
  if (me) {
    const others = me.workspaces.filter((w) => w.id !== me.workspace.id).map((w) => w.name);
    const after =
      others.length === 0
        ? 'You belong to no other workspace, so you will be signed out.'
        : others.length === 1
          ? `You move on to ${others[0]}.`
          : `You stay a member of ${listInWords(others)}, and move on to the one you used last.`;
    return {
      title: `Leave ${me.workspace.name}?`,
      description: `You lose access to it at once. ${removalDescription(calendars, true)} ${after}`,
      confirmLabel: 'Leave workspace',
      errorTitle: `You are still a member of ${me.workspace.name}`,
    };
  }
  if (member.status === 'invited') {
    // Not a member yet: nothing of theirs is here but the e-mailed link.
    return {
      title: `Cancel the invitation for ${member.name}?`,
      description: 'The link in their e-mail stops working. You can invite them again later.',
      confirmLabel: 'Cancel invitation',
      cancelLabel: 'Keep invitation',
      errorTitle: 'The invitation was not cancelled',
    };
  }
  return {
    title: `Remove ${member.name}?`,
    description: removalDescription(calendars),
    confirmLabel: 'Remove',
    errorTitle: `${member.name} was not removed`,
  };
}

/**
 * Removing yourself. The server moves this browser's session on to another workspace of yours (the one used last),
 * or ends it when none is left: the app then opens there as after a switch, or on sign-in, and says which.
 */
function useLeaveWorkspace() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const me = useCurrentMe();
  return useMutation({
    // The session moves on to another workspace (or ends): this tab follows it, not a switch elsewhere.
    mutationFn: (userId: string) => moveSession(() => api.delete(`/members/${encodeURIComponent(userId)}`)),
    onSuccess: async () => {
      const left = me.workspace.name;
      // Off the admin page first: the next workspace may not be one where you are an admin.
      await navigate({ to: '/patients', replace: true });
      await Promise.all([
        queryClient.resetQueries({ predicate: (query) => query.queryKey[0] !== meQueryKey[0] }),
        queryClient.refetchQueries({ queryKey: meQueryKey }),
      ]);
      const now = queryClient.getQueryData<Me | null>(meQueryKey);
      notifySuccess(
        `You left ${left}.`,
        now ? `You are now in ${now.workspace.name}.` : 'You belong to no other workspace, so you are signed out.',
      );
    },
  });
}

/** Sends a pending invitation again: a new link, the earlier one stops working (`POST /members/:userId/resend-invitation`). */
function useResendInvitation() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (userId: string) =>
      api.post<{ userId: string; replacedEarlier: boolean }>(
        `/members/${encodeURIComponent(userId)}/resend-invitation`,
      ),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: adminKeys.members }),
  });
}

/** `last_admin` in the words of this page; any other error as it is (with its request id). */
const inWords = (error: unknown) =>
  error instanceof ApiError && error.code === 'last_admin' ? new Error(LAST_ADMIN) : (error ?? undefined);

/** The question asked before someone gains or loses Admin, in words that say what changes. */
function roleConfirmation(member: WorkspaceMember, role: 'admin' | 'member' | null, isMe: boolean) {
  if (role === 'admin') {
    return {
      title: `Make ${member.name} an admin?`,
      description:
        'Admins manage members and their roles, API tokens, webhooks and workspace settings, and read the audit log.',
      confirmLabel: 'Make admin',
    };
  }
  return {
    title: isMe ? 'Stop being an admin?' : `Remove admin rights from ${member.name}?`,
    description: isMe
      ? 'You lose the admin pages at once, and only another admin can give them back.'
      : `${member.name} stays a member but can no longer manage members, tokens, webhooks or settings.`,
    confirmLabel: isMe ? 'Stop being an admin' : 'Remove admin rights',
  };
}

const inviteForm = z.object({
  email: z.string().trim().min(1, 'Enter their e-mail address').email('Enter an e-mail address like name@example.com'),
  name: z.string().trim().min(1, 'Enter their name').max(200),
  admin: z.boolean(),
  isProvider: z.boolean(),
});

function InviteDialog({ isOpen, onOpenChange }: { isOpen: boolean; onOpenChange: (open: boolean) => void }) {
  const invite = useInvite();
  const form = useZodForm(inviteForm, { defaultValues: { email: '', name: '', admin: false, isProvider: false } });
  const onSubmit = form.handleSubmit((values) =>
    invite
      .mutateAsync({
        email: values.email,
        name: values.name,
        role: values.admin ? 'admin' : 'member',
        isProvider: values.isProvider,
      })
      .then((sent) => {
        if (sent.replacedEarlier) {
          // Inviting again replaces the link mailed before: whoever relays it must know which one works.
          notifySuccess(
            'Invitation sent again',
            `The link in the earlier e-mail to ${values.email} no longer works; only the new one, valid for 7 days, does.`,
          );
        } else {
          notifySuccess('Invitation sent', `${values.name} gets an e-mail with a link valid for 7 days.`);
        }
        form.reset();
        onOpenChange(false);
      })
      .catch((error) => applyProblem(form, error, { email_taken: 'email', already_member: 'email' })),
  );
  return (
    <AppDialog title="Invite someone" isOpen={isOpen} onOpenChange={onOpenChange} testId="invite-dialog">
      <form className="form" onSubmit={onSubmit} noValidate>
        <FormError message={form.formState.errors.root?.message} />
        {/* The dialog opens on its first field, not on itself: typing starts at once. */}
        <TextInput control={form.control} name="email" label="E-mail" type="email" isRequired autoFocus />
        <TextInput control={form.control} name="name" label="Name" isRequired />
        <CheckboxInput control={form.control} name="admin" label="Admin (manages members, tokens and settings)" />
        {/* What the flag does: appointments are scheduled with providers (offered for a patient's slot, a patient's
            preferred provider), and their app opens on their day's calendar. Every member sees patients. */}
        <CheckboxInput
          control={form.control}
          name="isProvider"
          label="Provider (appointments can be booked with them)"
        />
        <div className="form-actions">
          <Button type="submit" isDisabled={form.formState.isSubmitting} data-testid="send-invitation">
            Send invitation
          </Button>
        </div>
      </form>
    </AppDialog>
  );
}
