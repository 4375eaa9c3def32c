// The webhooks module's public entry: the only file other code imports from this module.
export { webhooksModule } from './module.js';

/** A notice in the workspace's inbox (`GET /inbox`, admins), e.g. an incident that touches the workspace. */
export { postInboxNotice, settleInboxNotices } from './service.js';
