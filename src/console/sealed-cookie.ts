import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Short-lived state in a cookie the browser cannot read or alter: AES-256-GCM (encrypted
 * and authenticated) under a key derived from the console's session secret, so every
 * replica sharing CONSOLE_SESSION_SECRET can open what another sealed. The expiry and
 * the cookie's name are inside the seal, so neither an old nor a transplanted value opens.
 */
export class CookieSeal {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly name: string,
    private readonly ttlMs: number,
  ) {
    // A key of its own per cookie name (HKDF): a sealed sign-in never opens as a session.
    this.key = Buffer.from(hkdfSync('sha256', secret, '', `gateway console: ${name}`, 32));
  }

  seal(value: unknown, now: number = Date.now()): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(this.name));
    const plain = Buffer.from(JSON.stringify({ v: value, exp: now + this.ttlMs }));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The sealed value, or undefined when it is malformed, tampered with or expired. */
  open(token: string | undefined, now: number = Date.now()): unknown {
    if (token === undefined || token.length > 4096) {
      return undefined;
    }
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) {
      return undefined;
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(this.name));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plain = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      const { v, exp } = JSON.parse(plain.toString('utf8')) as { v: unknown; exp: unknown };
      return typeof exp === 'number' && now < exp ? v : undefined;
    } catch {
      return undefined;
    }
  }
}
