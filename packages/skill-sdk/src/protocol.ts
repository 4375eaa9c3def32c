import type { Scope } from './manifest.js';

/** What Atrium POSTs to a private skill's endpoint for one tool call. */
export interface ToolCallRequest {
  /** Also the `webhook-id` header: unique per call, use it to deduplicate. */
  id: string;
  type: 'skill.tool_call';
  created_at: string;
  workspace_id: string;
  skill: { slug: string; skillId: string; version: string };
  tool: string;
  input: Record<string, unknown>;
  caller: { userId: string };
  grantedScopes: Scope[];
}

/** A 2xx answer; anything else (or a non-JSON body) is reported to the caller as 502 upstream_failed. */
export interface ToolCallResponse {
  result: unknown;
}

export interface ToolCallError {
  error: { code: string; message: string };
}
