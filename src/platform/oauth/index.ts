// platform/oauth: every provider token goes through here (architecture convention 14). See docs/platform.md.
export {
  type AdmitConnection,
  type CompletedAuthorization,
  completeAuthorization,
  countConnections,
  STATE_TTL_MS,
  saveConnection,
  startAuthorization,
} from './authorize.js';
export {
  type Connection,
  disconnect,
  disconnectIn,
  holdConnection,
  listConnections,
  type OAuthDeps,
  reauthRequired,
  type TokenUser,
} from './connections.js';
export { type MembershipCheck, registerMembershipCheck } from './membership.js';
export { codeChallengeS256, createCodeVerifier } from './pkce.js';
export { type AuthorizationState, invalidState, signState, verifyState } from './state.js';
export { oauthConnections } from './tables.js';
export { OAuthGrantError, type OAuthProvider, type TokenSet } from './token-client.js';
export { getAccessToken } from './tokens.js';
