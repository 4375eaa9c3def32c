/** Buttons on React Aria (press events, keyboard, focus ring only when it helps) in the house styles. */
import type { Ref } from 'react';
import { Button as AriaButton, type ButtonProps as AriaButtonProps } from 'react-aria-components';

export type ButtonVariant = 'primary' | 'secondary' | 'danger' | 'ghost';

export interface ButtonProps extends Omit<AriaButtonProps, 'className'> {
  variant?: ButtonVariant;
  size?: 'small' | 'medium';
  className?: string;
  ref?: Ref<HTMLButtonElement>;
}

export function Button({ variant = 'primary', size = 'medium', className, ...rest }: ButtonProps) {
  const classes = ['button', `button-${variant}`, size === 'small' ? 'button-small' : '', className ?? '']
    .filter(Boolean)
    .join(' ');
  return <AriaButton className={classes} {...rest} />;
}
