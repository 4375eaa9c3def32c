-- Messenger and Instagram webhooks carry no name: the `channels.contact-profile` job asks Graph once per
-- contact. When Graph refuses (a token it does not accept, an id it does not know, the person's privacy),
-- the time is kept here and the contact is not asked about again for 30 days, however often they write.
ALTER TABLE "channel_contacts" ADD COLUMN "name_refused_at" timestamp with time zone;
