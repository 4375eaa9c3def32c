-- A repeating video visit's room is a standing room: every occurrence meets in it (as Meet and Teams
-- give a series one link), so ending one meeting makes it warm again instead of closing it for the
-- weeks to come.
ALTER TABLE "telehealth_rooms" ADD COLUMN "standing" boolean DEFAULT false NOT NULL;
