/**
 * A labelled input with hint and error text wired up through aria-describedby. A message shown elsewhere (a
 * form-level alert) can be linked with `aria-describedby` and `aria-invalid`; they add to the field's own.
 */
import { type InputHTMLAttributes, useId } from 'react';

type FieldProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'id'> & {
  label: string;
  error?: string;
  hint?: string;
  name: string;
};

export function FormField({
  label,
  error,
  hint,
  name,
  required,
  'aria-describedby': describedElsewhere,
  'aria-invalid': invalidElsewhere,
  ...input
}: FieldProps) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId, describedElsewhere].filter(Boolean).join(' ') || undefined;
  const invalid =
    Boolean(error) || (invalidElsewhere !== undefined && invalidElsewhere !== false && invalidElsewhere !== 'false');
  return (
    <div className={`field${error ? ' field-invalid' : ''}`}>
      <label htmlFor={id}>
        {label}
        {required ? (
          <span className="required" aria-hidden="true">
            {' '}
            *
          </span>
        ) : null}
      </label>
      <input
        id={id}
        name={name}
        aria-required={required || undefined}
        aria-invalid={invalid || undefined}
        aria-describedby={describedBy}
        {...input}
      />
      {hint ? (
        <p id={hintId} className="field-hint">
          {hint}
        </p>
      ) : null}
      {error ? (
        <p id={errorId} className="field-error" data-testid={`field-error-${name}`}>
          {error}
        </p>
      ) : null}
    </div>
  );
}
