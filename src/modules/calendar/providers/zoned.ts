// Wall-clock helpers for the adapters (Graph takes local times); the zone arithmetic is platform's.
export { isTimeZone, localDateTime } from '../../../platform/zoned-time.js';
