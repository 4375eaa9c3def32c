/**
 * A date field whose value is taken once it is a whole date: after a pause in typing, on Enter or on
 * leaving the field (or at once when cleared). A date typed segment by segment passes through whole
 * but unwanted dates (a year goes 0002, 0020, 0202), and re-rendering the field from each of them
 * breaks the browser's typing; so the field is left to the browser while it has the focus, and only
 * a date from 1900 on is taken.
 */
import { type InputHTMLAttributes, useEffect, useRef } from 'react';

const WHOLE = /^(\d{4})-\d{2}-\d{2}$/;
const PAUSE_MS = 700;

type Props = Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'defaultValue' | 'onChange' | 'type'> & {
  /** YYYY-MM-DD, or '' for none. */
  value: string;
  onCommit: (value: string) => void;
};

export function DateInput({ value, onCommit, onBlur, onKeyDown, ...rest }: Props) {
  const field = useRef<HTMLInputElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined);
  const committed = useRef(value);
  useEffect(() => () => clearTimeout(timer.current), []);
  // A new value from outside (the URL, another control) shows unless someone is typing here.
  useEffect(() => {
    committed.current = value;
    const el = field.current;
    if (el && document.activeElement !== el && el.value !== value) el.value = value;
  }, [value]);
  const commit = (next: string) => {
    clearTimeout(timer.current);
    const m = WHOLE.exec(next);
    if (next !== '' && !(m && Number(m[1]) >= 1900)) return;
    if (next === committed.current) return;
    committed.current = next;
    onCommit(next);
  };
  return (
    <input
      {...rest}
      ref={field}
      type="date"
      min={rest.min ?? '1900-01-01'}
      defaultValue={value}
      onChange={(e) => {
        const next = e.target.value;
        clearTimeout(timer.current);
        if (next === '') return commit('');
        timer.current = setTimeout(() => commit(next), PAUSE_MS);
      }}
      onKeyDown={(e) => {
        if (e.key === 'Enter') commit(e.currentTarget.value);
        onKeyDown?.(e);
      }}
      onBlur={(e) => {
        commit(e.currentTarget.value);
        onBlur?.(e);
      }}
    />
  );
}
