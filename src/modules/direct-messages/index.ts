// The direct-messages module's public entry: the only file other code imports from this module.
export { parsePatientMentions, splitMentions } from './mentions.js';
export { directMessagesModule } from './module.js';
export type { Message } from './schema.js';
export { recentMentions } from './service.js';
