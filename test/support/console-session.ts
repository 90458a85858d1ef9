import { createHmac } from 'node:crypto';

/** A console session cookie pair signed the way cookie-session (keygrip, SHA-1) signs it. */
export function signedSession(secret: string, value: object): { name: string; value: string }[] {
  const data = Buffer.from(JSON.stringify(value)).toString('base64');
  const sig = createHmac('sha1', secret)
    .update(`gw_console=${data}`)
    .digest('base64')
    .replace(/\/|\+|=/g, (c) => ({ '/': '_', '+': '-', '=': '' })[c] ?? c);
  return [
    { name: 'gw_console', value: data },
    { name: 'gw_console.sig', value: sig },
  ];
}

/** A `cookie` header signing in a member of `team`. */
export function memberCookie(secret: string, team: string): string {
  return signedSession(secret, { role: 'member', team, name: `${team}@example.com`, csrf: 'x' })
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}
