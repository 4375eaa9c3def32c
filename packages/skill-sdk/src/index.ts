export { createAjv, linearRegExp, linearRegExpEngine, UnsupportedPatternError } from './ajv.js';
export {
  createSkillHandler,
  type EndpointAnswer,
  handleToolCall,
  type SkillEndpointOptions,
  type ToolHandler,
} from './handler.js';
export { createSkillHarness, type HarnessOptions, type HarnessOutcome, type SkillHarness } from './harness.js';
export {
  checkToolInput,
  compareVersions,
  type JsonSchema,
  type ManifestCheck,
  type ManifestProblem,
  SCOPES,
  type Scope,
  type ScopeDeclaration,
  SEMVER,
  type SkillManifest,
  SLUG,
  TIERS,
  type Tier,
  TOOL_NAME,
  type ToolDefinition,
  toFunctionTools,
  toMcpTools,
  validateManifest,
} from './manifest.js';
export type { ToolCallError, ToolCallRequest, ToolCallResponse } from './protocol.js';
export { MAX_EXPANDED_NODES, MAX_UNIQUE_ITEMS, schemaCostProblems } from './schema-cost.js';
export {
  computeSignature,
  type HeaderBag,
  SignatureError,
  signRequest,
  type VerifyOptions,
  verifyRequest,
} from './verify.js';
