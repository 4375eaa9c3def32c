// The telehealth module's public entry: the only file other code imports from this module.

export { localStunUrl } from '../../emulators/video/routes.js';
export { telehealthModule } from './module.js';
export {
  cancelRooms,
  closeProviderRooms,
  type EventRoom,
  type Room,
  requestRoom,
  roomsForEvents,
} from './service.js';
