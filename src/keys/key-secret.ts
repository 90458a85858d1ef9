import * as crypto from 'node:crypto';
import { createHash, randomBytes } from 'node:crypto';

/** Recognisable prefix of every secret the gateway issues (secret scanners key on it). */
export const SECRET_PREFIX = 'gw-';
const SECRET_BYTES = 32;

const ISSUED_SHAPE = /^gw-[A-Za-z0-9_-]{43}$/;

/**
 * Whether a presented secret could be one this gateway issued (`gw-` and 32 random bytes in
 * base64url): anything else is refused without asking the key store, so random bearer
 * tokens cost no database query and cannot crowd real keys out of the cache.
 */
export function hasIssuedShape(secret: string): boolean {
  return ISSUED_SHAPE.test(secret);
}

/** A freshly issued secret, with what may be stored and shown of it. */
export interface IssuedSecret {
  /** The secret itself: returned to the caller once, never stored or logged. */
  secret: string;
  /** SHA-256 (hex): a 256-bit random secret needs no salt or slow hash. */
  hash: string;
  /** The first characters and the last four, for list views (`gw-AbCd…wxyz`). */
  prefix: string;
  last4: string;
}

export function issueSecret(): IssuedSecret {
  const secret = SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
  return {
    secret,
    hash: sha256Hex(secret),
    prefix: secret.slice(0, SECRET_PREFIX.length + 4),
    last4: secret.slice(-4),
  };
}

/** Public id of a managed key: `key_` and 24 random hex characters. */
export function newKeyId(): string {
  return `key_${randomBytes(12).toString('hex')}`;
}

/** What list views show of a secret. */
export function maskedSecret(prefix: string, last4: string): string {
  return `${prefix}…${last4}`;
}

/**
 * `crypto.hash` (Node 20.12 and later) digests without a Hash object: about a third of the
 * time of createHash for a key-sized input, and every authenticated request hashes its key.
 */
const oneShotHash = (crypto as { hash?: typeof crypto.hash }).hash;

/** SHA-256 of a key, lower-case hex: how keys are looked up and written in the keys file. */
export function sha256Hex(value: string): string {
  return oneShotHash === undefined
    ? createHash('sha256').update(value).digest('hex')
    : oneShotHash('sha256', value, 'hex');
}
