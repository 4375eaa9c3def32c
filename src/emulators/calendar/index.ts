// The calendar provider emulators (contract §11), mounted by the calendar module.
export { googleEmulator } from './google.js';
export { microsoftEmulator } from './microsoft.js';
export { mintEmulatorTokens } from './tokens.js';
export { zoomEmulator } from './zoom.js';
