/**
 * Forms: react-hook-form with a zod resolver (the server's own body schemas where the web app can
 * import them), fields on React Aria, and problem+json answers mapped onto the field they concern.
 */
import { zodResolver } from '@hookform/resolvers/zod';
import type { ReactNode } from 'react';
import {
  Checkbox,
  FieldError,
  Input,
  Label,
  Text,
  TextArea,
  TextField,
  type TextFieldProps,
} from 'react-aria-components';
import {
  type Control,
  Controller,
  type FieldPath,
  type FieldValues,
  type Path,
  type UseFormProps,
  type UseFormReturn,
  useForm,
} from 'react-hook-form';
import type { z } from 'zod';
import { ApiError, describeError, fieldName } from '../../api.js';
import { EMAIL_WORDS, tooLongWords, tooShortWords } from '../../zod-config.js';

/** A form validated by `schema` before it is sent (same rules and words as the server). */
export function useZodForm<S extends z.ZodType<FieldValues, FieldValues>>(
  schema: S,
  options: Omit<UseFormProps<z.input<S>, unknown, z.output<S>>, 'resolver'> = {},
): UseFormReturn<z.input<S>, unknown, z.output<S>> {
  return useForm<z.input<S>, unknown, z.output<S>>({
    mode: 'onTouched',
    ...options,
    resolver: zodResolver(schema as never) as never,
  });
}

/** Plain words for the problem codes a form can get back, where the server's detail is terse. */
const CODE_MESSAGES: Record<string, string> = {
  mrn_taken: 'Another patient already has this MRN.',
  email_taken: 'Someone with this e-mail address is already a member.',
  already_member: 'This person is already a member of the workspace.',
  weak_password: 'Choose a stronger password: longer, and not a common word or pattern.',
  wrong_password: 'That is not your current password.',
};

/**
 * Puts an API error on the form: field problems next to their fields (`root` for the rest), and the focus
 * on the first field that got one, so it is read out with its message (a form-level problem is an alert).
 * Returns true when at least one field got a message.
 */
export function applyProblem<T extends FieldValues>(
  form: Pick<UseFormReturn<T, unknown, unknown>, 'setError' | 'getValues' | 'setFocus'>,
  error: unknown,
  fieldForCode: Record<string, Path<T>> = {},
): boolean {
  const known = new Set(Object.keys(form.getValues() ?? {}));
  const placed: Path<T>[] = [];
  if (error instanceof ApiError) {
    const coded = fieldForCode[error.code];
    if (coded) {
      form.setError(coded, { type: 'server', message: CODE_MESSAGES[error.code] ?? error.detail });
      focusLater(form, coded);
      return true;
    }
    for (const problem of error.errors) {
      const field = nestedField(form, problem.path) ?? fieldName(problem.path);
      if (field && (known.has(field) || field.includes('.'))) {
        form.setError(field as Path<T>, { type: 'server', message: plainMessage(problem.message) });
        placed.push(field as Path<T>);
      }
    }
    if (placed.length > 0) focusLater(form, placed[0]);
    else form.setError('root', { type: 'server', message: CODE_MESSAGES[error.code] ?? describeError(error) });
    return placed.length > 0;
  }
  form.setError('root', { type: 'server', message: describeError(error) });
  return false;
}

/**
 * Focuses the field once its message is on the page (marked invalid and described by it), not before,
 * so what is read out on focus includes the message.
 */
function focusLater<T extends FieldValues>(form: Pick<UseFormReturn<T, unknown, unknown>, 'setFocus'>, field: Path<T>) {
  setTimeout(() => form.setFocus(field), 0);
}

/**
 * The nested field a problem path names when the form holds one (`body.credentials.pageId` on a form
 * with `credentials.pageId`), so the message sits beside that input rather than on its parent object.
 */
function nestedField<T extends FieldValues>(form: Pick<UseFormReturn<T, unknown, unknown>, 'getValues'>, path: string) {
  const segments = path.split(/[./]/).filter(Boolean);
  if (segments[0] === 'body') segments.shift();
  for (let n = segments.length; n > 1; n--) {
    const candidate = segments.slice(0, n).join('.');
    const value: unknown = form.getValues(candidate as Path<T>);
    if (value !== undefined && (value === null || typeof value !== 'object')) return candidate;
  }
  return undefined;
}

/**
 * Zod's stock English ("Too small: expected string to have >=1 characters"), as the server answers it, in the plain
 * words the browser's own checks use (zod-config.ts).
 */
export function plainMessage(message: string): string {
  if (/^Required$/i.test(message)) return tooShortWords(1);
  const max = /expected string to have <=(\d+) characters/i.exec(message);
  if (max) return tooLongWords(Number(max[1]));
  const min = /expected string to have >=(\d+) characters?/i.exec(message);
  if (min) return tooShortWords(Number(min[1]));
  if (/^Invalid email/i.test(message)) return EMAIL_WORDS;
  if (/^Invalid input: expected/i.test(message)) return 'Fill this in with a valid value.';
  return message;
}

interface TextInputProps<T extends FieldValues> extends Omit<TextFieldProps, 'name' | 'children'> {
  control: Control<T, unknown, unknown>;
  name: FieldPath<T>;
  label: string;
  description?: ReactNode;
  multiline?: boolean;
  placeholder?: string;
  rows?: number;
}

/** A labelled text input bound to the form; its error is announced and linked to the input. */
export function TextInput<T extends FieldValues>({
  control,
  name,
  label,
  description,
  multiline,
  placeholder,
  rows,
  ...rest
}: TextInputProps<T>) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field, fieldState }) => (
        <TextField
          {...rest}
          className={`field${fieldState.error ? ' field-invalid' : ''}`}
          name={field.name}
          value={(field.value as string | null | undefined) ?? ''}
          onChange={field.onChange}
          onBlur={field.onBlur}
          isInvalid={!!fieldState.error}
          validationBehavior="aria"
          data-testid={`field-${name}`}
        >
          <Label>
            {label}
            {rest.isRequired ? (
              <span className="required" aria-hidden="true">
                {' '}
                *
              </span>
            ) : null}
          </Label>
          {multiline ? (
            <TextArea ref={field.ref} placeholder={placeholder} rows={rows ?? 4} />
          ) : (
            <Input ref={field.ref} placeholder={placeholder} />
          )}
          {description ? (
            <Text slot="description" className="field-hint">
              {description}
            </Text>
          ) : null}
          <FieldError className="field-error" data-testid={`field-error-${name}`}>
            {fieldState.error?.message}
          </FieldError>
        </TextField>
      )}
    />
  );
}

/** A checkbox bound to the form. */
export function CheckboxInput<T extends FieldValues>({
  control,
  name,
  label,
}: {
  control: Control<T, unknown, unknown>;
  name: FieldPath<T>;
  label: string;
}) {
  return (
    <Controller
      control={control}
      name={name}
      render={({ field }) => (
        <Checkbox
          className="ui-checkbox"
          name={field.name}
          isSelected={!!field.value}
          onChange={field.onChange}
          data-testid={`field-${name}`}
        >
          <span className="checkbox-box" aria-hidden="true">
            <svg viewBox="0 0 18 18" width="12" height="12" aria-hidden="true" focusable="false">
              <polyline points="2 9 7 14 16 4" fill="none" stroke="currentColor" strokeWidth="3" />
            </svg>
          </span>
          {label}
        </Checkbox>
      )}
    />
  );
}

/** The form-level error (no single field to blame), as an alert. */
export function FormError({ message, testId = 'form-error' }: { message?: string; testId?: string }) {
  if (!message) return null;
  return (
    <div className="notice notice-error" role="alert" data-testid={testId}>
      <p>{message}</p>
    </div>
  );
}

/** A checkbox outside react-hook-form (lists of choices held in component state), same look as CheckboxInput. */
export function Check({
  isSelected,
  onChange,
  children,
  testId,
  className,
}: {
  isSelected: boolean;
  onChange: (selected: boolean) => void;
  children: ReactNode;
  testId?: string;
  className?: string;
}) {
  return (
    <Checkbox
      className={`ui-checkbox${className ? ` ${className}` : ''}`}
      isSelected={isSelected}
      onChange={onChange}
      data-testid={testId}
    >
      <span className="checkbox-box" aria-hidden="true">
        <svg viewBox="0 0 18 18" width="12" height="12" aria-hidden="true" focusable="false">
          <polyline points="2 9 7 14 16 4" fill="none" stroke="currentColor" strokeWidth="3" />
        </svg>
      </span>
      <span className="ui-checkbox-label">{children}</span>
    </Checkbox>
  );
}
