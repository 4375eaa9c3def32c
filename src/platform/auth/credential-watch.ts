import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../types.js';
import { lookupCredential } from './authenticate.js';

/** Re-read the credential at least this often (covers session expiry and a NOTIFY lost in a reconnect). */
const RECHECK_MS = 60_000;

export interface CredentialWatch {
  /**
   * Resolves true while the credential is valid. After any invalidation that may concern it
   * (its own hash, or `*`: membership, role, tier), it waits for a fresh database read first, so
   * a stream never delivers anything once a revocation has reached this instance.
   */
  stillValid(): Promise<boolean>;
  stop(): void;
}

/**
 * Keeps a long-lived response (an event stream) tied to the credential that opened it (contract
 * §6): once the token is revoked, the session signed out or expired, or the user is no longer a
 * member of the workspace, or its role or the workspace's tier changed, `onRevoked` runs (the stream ends). Driven by the credential cache's
 * invalidations, which arrive from every instance through NOTIFY, so it ends within moments
 * rather than polling; a slow timer re-reads the credential as a safety net.
 */
export function watchCredential(deps: AppDeps, request: FastifyRequest, onRevoked: () => void): CredentialWatch {
  const credential = request.credential;
  const ctx = request.ctx;
  let revoked = !credential || !ctx;
  let stopped = false;
  let wanted = 0; // invalidations seen
  let confirmed = 0; // the invalidation count the last successful read covers
  let checking: Promise<void> | undefined;

  const revoke = () => {
    if (revoked) return;
    revoked = true;
    onRevoked();
  };

  const check = (): Promise<void> => {
    checking ??= (async () => {
      try {
        while (!revoked && !stopped && confirmed < wanted) {
          const target = wanted;
          const found = credential ? await lookupCredential(deps, credential.hash, credential.via) : undefined;
          // The same person in the same workspace with the same role and tier: a change of role or tier
          // ends the stream too (the client reconnects, and is let in again only if still allowed).
          const same =
            found &&
            ctx &&
            found.workspaceId === ctx.workspaceId &&
            found.userId === ctx.userId &&
            found.role === ctx.role &&
            found.tier === ctx.tier;
          if (!same) revoke();
          else confirmed = target;
        }
      } catch (err) {
        // Cannot tell: fail closed. The client reconnects (and authenticates afresh).
        request.log.warn({ err }, 'credential re-check failed; ending the stream');
        revoke();
      } finally {
        checking = undefined;
      }
    })();
    return checking;
  };

  const recheck = () => {
    wanted++;
    void check();
  };
  const unsubscribe = deps.principals.onInvalidate((key) => {
    if (key === '*' || key === credential?.hash) recheck();
  });
  const timer = setInterval(recheck, RECHECK_MS);
  timer.unref();
  if (revoked) queueMicrotask(onRevoked);

  return {
    async stillValid() {
      while (!revoked && !stopped && confirmed < wanted) await check();
      return !revoked && !stopped;
    },
    stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
    },
  };
}
