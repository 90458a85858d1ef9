import { createHmac } from 'node:crypto';

/**
 * A console session cookie pair signed the way cookie-session (keygrip, SHA-1) signs it;
 * valid for an hour unless `value` names its own `exp`.
 */
export function signedSession(secret: string, value: object): { name: string; value: string }[] {
  const session = { exp: Date.now() + 3_600_000, ...value };
  const data = Buffer.from(JSON.stringify(session)).toString('base64');
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
export function memberCookie(secret: string, team: string, exp?: number): string {
  const who = { role: 'member', team, name: `${team}@example.com`, csrf: 'x' };
  return signedSession(secret, exp === undefined ? who : { ...who, exp })
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}
