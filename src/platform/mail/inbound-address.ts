// The address a workspace receives mail at (contract §5.3 GET /mail/address). Calendar invitations
// name it as their ORGANIZER, so guests' iMIP replies come back to the workspace from any mail client.
export const INBOUND_MAIL_DOMAIN = 'inbound.atrium.local';

export const inboundAddress = (workspaceId: string) => `${workspaceId}@${INBOUND_MAIL_DOMAIN}`;

/** The workspace id of an inbound address, or undefined for any other address. */
export function workspaceOfAddress(address: string): string | undefined {
  const [local, domain] = address.toLowerCase().split('@');
  return domain === INBOUND_MAIL_DOMAIN && local ? local : undefined;
}
