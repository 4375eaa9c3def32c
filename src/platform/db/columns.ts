import { timestamp } from 'drizzle-orm/pg-core';

/** `timestamp with time zone` read as a Date: the one timestamp column type every table uses. */
export const timestamptz = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' });
