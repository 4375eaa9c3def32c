/**
 * A modal dialog on React Aria: traps focus, closes on Escape (and outside press when dismissable),
 * returns focus to whatever opened it, labels itself by its title and is described by its description.
 *
 * Either controlled (`isOpen`/`onOpenChange`) or inside a `<DialogTrigger>` with its opener button.
 */
import { type ReactNode, useEffect, useId, useRef } from 'react';
import { Dialog, DialogTrigger, Heading, Modal, ModalOverlay } from 'react-aria-components';
import { Icon } from '../icons.js';
import { ErrorNotice } from '../status.js';
import { Button, type ButtonVariant } from './button.js';

export { DialogTrigger };

export interface AppDialogProps {
  title: string;
  /** A sentence under the title. */
  description?: ReactNode;
  children: ReactNode | ((close: () => void) => ReactNode);
  isOpen?: boolean;
  onOpenChange?: (open: boolean) => void;
  /** Clicking outside closes it (off for forms, where a stray click would lose typing). */
  isDismissable?: boolean;
  /** `drawer` slides in from the side (the phone navigation). */
  variant?: 'dialog' | 'drawer';
  size?: 'small' | 'medium' | 'large';
  role?: 'dialog' | 'alertdialog';
  testId?: string;
}

export function AppDialog({
  title,
  description,
  children,
  isOpen,
  onOpenChange,
  isDismissable = false,
  variant = 'dialog',
  size = 'medium',
  role = 'dialog',
  testId,
}: AppDialogProps) {
  const descriptionId = useId();
  return (
    <ModalOverlay
      className={`modal-overlay modal-overlay-${variant}`}
      isOpen={isOpen}
      onOpenChange={onOpenChange}
      isDismissable={isDismissable || variant === 'drawer'}
    >
      <Modal className={`modal modal-${variant} modal-${size}`}>
        <Dialog
          className="dialog"
          role={role}
          aria-describedby={description ? descriptionId : undefined}
          data-testid={testId}
        >
          {({ close }) => (
            <>
              <div className="dialog-header">
                <Heading slot="title" className="dialog-title">
                  {title}
                </Heading>
                <button type="button" className="icon-button" onClick={close} aria-label="Close">
                  <Icon name="close" />
                </button>
              </div>
              {description ? (
                <p id={descriptionId} className="dialog-description muted">
                  {description}
                </p>
              ) : null}
              <div className="dialog-body">{typeof children === 'function' ? children(close) : children}</div>
            </>
          )}
        </Dialog>
      </Modal>
    </ModalOverlay>
  );
}

export interface ConfirmDialogProps {
  title: string;
  description: string;
  confirmLabel: string;
  isOpen: boolean;
  onOpenChange: (open: boolean) => void;
  onConfirm: () => void;
  pending?: boolean;
  confirmTestId?: string;
  /** Why the action failed, shown in the dialog (which stays open), not behind it. */
  error?: unknown;
  errorTitle?: string;
  /** `danger` for what cannot be undone (the default); `primary` for a final but ordinary step. */
  confirmVariant?: ButtonVariant;
  /** The safe choice's words ("Cancel"; "Keep invitation" where the action itself is a cancelling). */
  cancelLabel?: string;
  /** False once the question no longer stands (done meanwhile elsewhere): the action's button goes. */
  canConfirm?: boolean;
}

/** "Are you sure?" for destructive actions: an alert dialog with Cancel (focused first) and the action. */
export function ConfirmDialog({
  title,
  description,
  confirmLabel,
  isOpen,
  onOpenChange,
  onConfirm,
  pending = false,
  confirmTestId,
  error,
  errorTitle,
  confirmVariant = 'danger',
  cancelLabel = 'Cancel',
  canConfirm = true,
}: ConfirmDialogProps) {
  // The action's button may go while it has the focus (done meanwhile elsewhere): the focus stays in the dialog.
  const cancel = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!canConfirm) cancel.current?.focus();
  }, [canConfirm]);
  return (
    <AppDialog
      title={title}
      description={description}
      isOpen={isOpen}
      onOpenChange={onOpenChange}
      role="alertdialog"
      size="small"
    >
      {error ? <ErrorNotice error={error} title={errorTitle} testId="confirm-error" /> : null}
      <div className="form-actions">
        {/* The safe choice has the focus, so Enter pressed out of habit changes nothing. */}
        <Button variant="secondary" autoFocus ref={cancel} onPress={() => onOpenChange(false)}>
          {cancelLabel}
        </Button>
        {/* Pending, not disabled: a disabled button would drop the focus out of the dialog while it works. */}
        {canConfirm ? (
          <Button variant={confirmVariant} isPending={pending} data-testid={confirmTestId} onPress={onConfirm}>
            {confirmLabel}
          </Button>
        ) : null}
      </div>
    </AppDialog>
  );
}
