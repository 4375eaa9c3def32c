/**
 * Create an endpoint, or change one: URL (checked by the server at once), event filter, description. A changed
 * URL keeps the endpoint's id, secret and log: retries and replays of its events go to the new URL.
 */
import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { ApiError, describeError, fieldErrors } from '../../api.js';
import { Button } from '../../components/ui/button.js';
import { Check, plainMessage } from '../../components/ui/form.js';
import { eventWords } from './event-words.js';
import {
  type CreatedEndpoint,
  type Endpoint,
  type EndpointChanges,
  EVENT_TYPES,
  useCreateEndpoint,
  useUpdateEndpoint,
} from './webhooks-api.js';

/** What an endpoint can subscribe to: every event but the test event, which Send test event sends whatever the filter. */
const CHOICES = EVENT_TYPES.filter((type) => type !== 'webhook.test');

const REASONS: Record<string, string> = {
  scheme: 'Use an https:// URL.',
  credentials: 'Remove the user name and password from the URL.',
  blocked_address: 'This host resolves to a private, local or reserved address, which webhooks may not call.',
  unresolvable: 'This host name does not resolve.',
  invalid: 'This is not a valid URL.',
};

/** The server's URL rule in words (zod's stock text says "Invalid URL" or "Too small"). */
function plainUrlMessage(message: string): string {
  if (/url|invalid/i.test(message) && !/https/i.test(message)) return REASONS.invalid;
  return plainMessage(message);
}

type EndpointFormProps =
  | { endpoint?: undefined; onCreated: (endpoint: CreatedEndpoint) => void }
  | { endpoint: Endpoint; onSaved: (endpoint: Endpoint) => void; onCancel: () => void };

export function EndpointForm(props: EndpointFormProps) {
  const { endpoint } = props;
  const urlId = useId();
  const descriptionId = useId();
  const [url, setUrl] = useState(endpoint?.url ?? '');
  const [description, setDescription] = useState(endpoint?.description ?? '');
  const [allEvents, setAllEvents] = useState(endpoint ? endpoint.events.includes('*') : true);
  const [events, setEvents] = useState<string[]>(endpoint?.events.filter((e) => e !== '*') ?? []);
  const create = useCreateEndpoint();
  const update = useUpdateEndpoint();
  const urlInput = useRef<HTMLInputElement>(null);
  // Editing (in a dialog): open on the first field. The effect runs after React Aria has focused the dialog itself.
  const editing = endpoint !== undefined;
  useEffect(() => {
    if (editing) urlInput.current?.focus();
  }, [editing]);

  const error = endpoint ? update.error : create.error;
  const pending = endpoint ? update.isPending : create.isPending;
  const reason = error instanceof ApiError && error.code === 'unsafe_url' ? String(error.problem.reason ?? '') : null;
  const fields = fieldErrors(error);
  const urlError = reason
    ? (REASONS[reason] ?? describeError(error))
    : fields.url
      ? plainUrlMessage(fields.url)
      : undefined;
  const eventsError = fields.events ? 'Choose at least one event, or All events.' : undefined;
  const descriptionError = fields.description ? plainMessage(fields.description) : undefined;

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (props.endpoint) {
      // Only what changed: an unchanged URL is not checked (and resolved) again.
      const changes: EndpointChanges = {};
      if (url.trim() !== props.endpoint.url) changes.url = url.trim();
      if (description.trim() !== (props.endpoint.description ?? '')) changes.description = description.trim() || null;
      const filter = allEvents ? ['*'] : events;
      if (filter.join(' ') !== props.endpoint.events.join(' ')) changes.events = filter;
      if (Object.keys(changes).length === 0) return props.onCancel();
      const { onSaved } = props;
      update.mutate({ id: props.endpoint.id, ...changes }, { onSuccess: onSaved });
      return;
    }
    const { onCreated } = props;
    create.mutate(
      {
        url: url.trim(),
        events: allEvents ? ['*'] : events,
        ...(description.trim() ? { description: description.trim() } : {}),
      },
      {
        onSuccess: (endpoint) => {
          setUrl('');
          setDescription('');
          setAllEvents(true);
          setEvents([]);
          onCreated(endpoint);
        },
      },
    );
  };

  const toggle = (type: string) =>
    setEvents((current) => (current.includes(type) ? current.filter((t) => t !== type) : [...current, type]));

  return (
    <form className="form" onSubmit={submit} noValidate data-testid="endpoint-form">
      <div className={`field${urlError ? ' field-invalid' : ''}`}>
        <label htmlFor={urlId}>
          Endpoint URL <span className="required">*</span>
        </label>
        <input
          id={urlId}
          ref={urlInput}
          type="url"
          required
          placeholder="https://example.com/webhooks/atrium"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          aria-invalid={urlError ? true : undefined}
        />
        {urlError ? (
          <p className="field-error" data-testid="url-error">
            {urlError}
          </p>
        ) : (
          <p className="field-hint">
            HTTPS only. Checked now and again before every delivery.
            {endpoint ? ' Retries and replays go to the new URL; the secret stays.' : ''}
          </p>
        )}
      </div>
      <div className={`field${descriptionError ? ' field-invalid' : ''}`}>
        <label htmlFor={descriptionId}>Description</label>
        <input
          id={descriptionId}
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          maxLength={500}
          aria-invalid={descriptionError ? true : undefined}
        />
        {descriptionError ? <p className="field-error">{descriptionError}</p> : null}
      </div>
      <fieldset className="field event-filter">
        <legend>Events</legend>
        <Check isSelected={allEvents} onChange={setAllEvents} testId="all-events">
          All events
        </Check>
        {!allEvents ? (
          <div className="event-grid">
            {CHOICES.map((type) => (
              <Check key={type} isSelected={events.includes(type)} onChange={() => toggle(type)}>
                {eventWords(type)} <code className="muted event-code">{type}</code>
              </Check>
            ))}
          </div>
        ) : null}
        <p className="field-hint">
          Emergency access to a record (<code>break_glass.invoked</code>) is always sent, whatever you choose.
        </p>
        {eventsError ? <p className="field-error">{eventsError}</p> : null}
      </fieldset>
      {error && !urlError && !eventsError && !descriptionError ? (
        <p className="field-error" role="alert">
          {describeError(error)}
        </p>
      ) : null}
      <div className="form-actions">
        {props.endpoint ? (
          <Button variant="secondary" onPress={props.onCancel}>
            Cancel
          </Button>
        ) : null}
        {/* Pending, not disabled, while it works: a disabled button would drop the keyboard focus to the page. */}
        <Button type="submit" isPending={pending} data-testid={endpoint ? 'save-endpoint' : undefined}>
          {endpoint ? (pending ? 'Saving…' : 'Save changes') : pending ? 'Adding…' : 'Add endpoint'}
        </Button>
      </div>
    </form>
  );
}
