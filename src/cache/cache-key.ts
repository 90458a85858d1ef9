import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { own, setOwn } from '../common/own';

/**
 * Body fields that change how an answer is delivered, not what it says: a streamed and an
 * unstreamed request share one entry, replayed in whichever form the client asks for.
 */
const DELIVERY_FIELDS: ReadonlySet<string> = new Set(['stream', 'stream_options']);

/** Client headers an upstream reads, which can change the answer (Anthropic's API version and betas). */
const ANSWER_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/** Bumped when what an entry holds changes shape, so that old entries are never read. */
const KEY_VERSION = 1;

/** What a cache key covers: everything that changes the answer. */
export interface CacheKeyParts {
  /** The endpoint's wire format. */
  format: string;
  /** The requested catalog model (aliases resolve to one id). */
  model: string;
  /**
   * The models that may serve, in order (the requested one, then its fallbacks): an answer
   * a fallback gave is replayed only to requests that allow that fallback.
   */
  candidates: readonly string[];
  /** The client's body as received (protection tools included); `model` is left out. */
  body: Readonly<Record<string, unknown>>;
  /** The protections on for the request, by name (forced ones included), in run order. */
  protections: readonly string[];
  /** Who may share the entry: a team, or one key. */
  scope: string;
  headers: IncomingHttpHeaders;
}

/**
 * The entry's key: a SHA-256 over the canonical JSON of its parts (object keys sorted at
 * every depth, so that two bodies differing only in key order share an entry), hex.
 */
export function cacheKey(parts: CacheKeyParts): string {
  const hash = createHash('sha256');
  hash.update(
    canonicalJson([
      KEY_VERSION,
      parts.format,
      parts.model,
      parts.candidates,
      parts.scope,
      parts.protections,
      ANSWER_HEADERS.map((name) => parts.headers[name] ?? null),
    ]),
  );
  hash.update('\n');
  hash.update(canonicalJson(parts.body, (key) => key === 'model' || DELIVERY_FIELDS.has(key)));
  return hash.digest('hex');
}

/**
 * JSON with object keys in code-point order at every depth; `skip` leaves out top-level keys.
 * Native JSON.stringify does the writing; the replacer only reorders the objects whose keys
 * are not in order already (a copy of those alone), which keeps it within about 1.5 times a
 * plain stringify.
 */
export function canonicalJson(value: unknown, skip?: (key: string) => boolean): string {
  let root = value;
  if (skip !== undefined && isRecord(value)) {
    const kept: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      if (!skip(key)) {
        setOwn(kept, key, own(value, key));
      }
    }
    root = kept;
  }
  return JSON.stringify(root, sortKeys) ?? 'null';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sortKeys(_key: string, value: unknown): unknown {
  if (!isRecord(value)) {
    return value;
  }
  const keys = Object.keys(value);
  let ordered = true;
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1] > keys[i]) {
      ordered = false;
      break;
    }
  }
  if (ordered) {
    return value;
  }
  const copy: Record<string, unknown> = {};
  for (const key of keys.sort()) {
    setOwn(copy, key, own(value, key));
  }
  return copy;
}

/** What the request's `Cache-Control` asks of the cache. */
export interface CacheDirectives {
  /** `no-cache`: do not answer from the cache (the fresh answer is still stored). */
  noCache: boolean;
  /** `no-store`: neither answer from nor store in the cache. */
  noStore: boolean;
}

const NONE: CacheDirectives = Object.freeze({ noCache: false, noStore: false });

/** Reads `no-cache` and `no-store` from a request's Cache-Control (case-insensitive, any order). */
export function cacheDirectives(header: string | string[] | undefined): CacheDirectives {
  if (header === undefined) {
    return NONE;
  }
  let noCache = false;
  let noStore = false;
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const directive = part.trim().toLowerCase().split('=')[0];
    if (directive === 'no-cache') {
      noCache = true;
    } else if (directive === 'no-store') {
      noStore = true;
    }
  }
  return { noCache, noStore };
}
