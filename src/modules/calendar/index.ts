// The calendar module's public entry: the only file other code imports from this module.

export { createEvent, deleteEvent, listEvents, patchEvent } from './events.js';
export { recordInvitationReply } from './invitations.js';
export { calendarModule } from './module.js';
export type { CalendarEvent, CalendarInfo, Draft } from './schema.js';
