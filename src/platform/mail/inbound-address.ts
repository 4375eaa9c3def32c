// The address a workspace receives mail at (contract §5.3 GET /mail/address): `<workspace id>@<domain>`, the domain
// being ATRIUM_INBOUND_MAIL_DOMAIN (the domain whose MX delivers to POST /mail/inbound). Calendar invitations name
// it as their ORGANIZER, so guests' iMIP replies come back to the workspace from any mail client.
export const DEFAULT_INBOUND_MAIL_DOMAIN = 'inbound.atrium.local';

export const inboundAddress = (domain: string, workspaceId: string) => `${workspaceId}@${domain}`;

/** The workspace id of an address at the inbound domain, or undefined for any other address. */
export function workspaceOfAddress(domain: string, address: string): string | undefined {
  const at = address.lastIndexOf('@');
  if (at <= 0) return undefined;
  const [local, host] = [address.slice(0, at).toLowerCase(), address.slice(at + 1).toLowerCase()];
  return host === domain.toLowerCase() && local ? local : undefined;
}
