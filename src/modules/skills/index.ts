// The skills module's public entry: the only file other code imports from this module.
export { type AppointmentSource, registerAppointmentSource, type SkillCapabilities } from './capabilities.js';
export { type InvokeOutcome, type InvokeVia, invokeIfInstalled } from './dispatcher.js';
export { skillsModule } from './module.js';
export { EB_MEANING, type Eligibility270, type Eligibility271 } from './providers/payer/x12.js';
