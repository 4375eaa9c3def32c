// The marketplace's public entry: the only file other code imports from this module.
export { type BuiltinListing, registerBuiltinSkills } from './builtins.js';
export {
  type CatalogEntry,
  findCatalogEntry,
  findInstall,
  type Install,
  listActiveInstalls,
  type PrivateSkill,
  workspaceCatalog,
} from './catalog.js';
export { marketplaceModule } from './module.js';
export { scopeSchema, slugSchema, toolSchema } from './schema.js';
export { secretAad } from './service.js';
