import type { IncomingHttpHeaders } from 'node:http';
import { AuthenticationError, AuthThrottledError } from '../common/errors/gateway-errors';
import type { RequestContext } from '../common/request-context';
import { hasIssuedShape } from '../keys/key-secret';
import type { ApiKeyService } from './api-key.service';
import type { ApiKeyInfo } from '../common/key-policy';
import type { KeyVerdict } from '../keys/managed-keys';

function bearer(header: string | undefined): string | undefined {
  if (header === undefined) {
    return undefined;
  }
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match ? match[1].trim() : undefined;
}

type Refusal = 'unknown' | 'revoked' | 'expired';

/** The most telling refusal wins when both headers carry a (different) key. */
const RANK: Record<Refusal, number> = { unknown: 0, expired: 1, revoked: 2 };

function refusalError(refusal: Refusal): AuthenticationError {
  switch (refusal) {
    case 'revoked':
      return new AuthenticationError('This API key has been revoked.', 'api_key_revoked');
    case 'expired':
      return new AuthenticationError('This API key has expired.', 'api_key_expired');
    case 'unknown':
      return new AuthenticationError('Incorrect API key provided.', 'invalid_api_key');
  }
}

function accept(verdict: KeyVerdict, now: number): ApiKeyInfo | Refusal {
  if (verdict.status !== 'active') {
    return verdict.status;
  }
  const { expiresAt } = verdict.info;
  return expiresAt !== undefined && expiresAt <= now ? 'expired' : verdict.info;
}

function worse(a: Refusal | undefined, b: Refusal): Refusal {
  return a === undefined || RANK[b] > RANK[a] ? b : a;
}

/** Tries candidates in order; stays synchronous until a lookup has to wait. */
function settle(
  candidates: string[],
  from: number,
  keys: ApiKeyService,
  now: number,
  refusal: Refusal | undefined,
): ApiKeyInfo | Promise<ApiKeyInfo> {
  for (let i = from; i < candidates.length; i++) {
    const verdict = keys.resolve(candidates[i]);
    if (verdict instanceof Promise) {
      return verdict.then((v) => {
        const result = accept(v, now);
        return typeof result === 'string'
          ? settle(candidates, i + 1, keys, now, worse(refusal, result))
          : result;
      });
    }
    const result = accept(verdict, now);
    if (typeof result !== 'string') {
      return result;
    }
    refusal = worse(refusal, result);
  }
  throw refusalError(refusal ?? 'unknown');
}

/**
 * Finds the client key in `Authorization: Bearer <key>` (OpenAI SDK, Anthropic SDK 1.x) or
 * `x-api-key: <key>` (Anthropic SDK 0.x); when both are sent, either may carry it.
 * Throws a 401 that says whether a key was missing, unknown, revoked or expired (never
 * echoing it), or a 503 when the key store had to be asked and could not answer.
 * Synchronous for static and cached keys; a promise only when the store is asked.
 * Remembers nothing: requests go through {@link authenticateRequest}.
 */
export function authenticate(
  headers: IncomingHttpHeaders,
  keys: ApiKeyService,
  now: number = Date.now(),
): ApiKeyInfo | Promise<ApiKeyInfo> {
  const candidates = presentedKeys(headers);
  if (candidates.length === 0) {
    throw new AuthenticationError(
      'You didn\'t provide an API key. Send it as "Authorization: Bearer <key>" or "x-api-key: <key>".',
      null,
    );
  }
  return settle(candidates, 0, keys, now, undefined);
}

function presentedKeys(headers: IncomingHttpHeaders): string[] {
  const candidates: string[] = [];
  for (const candidate of [bearer(headers.authorization), headers['x-api-key']]) {
    if (typeof candidate === 'string' && candidate !== '') {
      candidates.push(candidate);
    }
  }
  return candidates;
}

/** What authentication reads of a request; express computes `ip` (TRUST_PROXY) when read. */
export interface AuthRequest {
  headers: IncomingHttpHeaders;
  ctx: RequestContext;
  readonly ip?: string;
}

/**
 * {@link authenticate}, with failures counted per client address (AuthFailureThrottle)
 * when a key of the issued shape is presented, the only kind the key store is asked
 * about. A key the cache holds is accepted first, without touching the throttle: that
 * keeps the hot path as it was and a cached key working from a throttled address.
 */
function authenticateCounted(
  req: AuthRequest,
  keys: ApiKeyService,
  now: number,
): ApiKeyInfo | Promise<ApiKeyInfo> {
  const throttle = keys.throttle;
  if (throttle?.enabled !== true) {
    return authenticate(req.headers, keys, now);
  }
  const candidates = presentedKeys(req.headers);
  if (!candidates.some(hasIssuedShape)) {
    return authenticate(req.headers, keys, now);
  }
  for (const candidate of candidates) {
    const verdict = keys.resolveCached(candidate);
    const result = verdict === undefined ? undefined : accept(verdict, now);
    if (result !== undefined && typeof result !== 'string') {
      return result;
    }
  }
  const address = req.ip;
  if (address === undefined) {
    return authenticate(req.headers, keys, now);
  }
  if (candidates.every((c) => !hasIssuedShape(c) || keys.lookupInFlight(c))) {
    // Its lookups are in flight already (a client's burst on a key not cached yet): this
    // request waits for them and costs the store nothing, so it takes no admission; a
    // valid key must not be refused for the concurrency of its own first requests.
    return settled(
      () => authenticate(req.headers, keys, now),
      (error) => {
        if (error instanceof AuthenticationError) {
          throttle.refused(address, now);
        }
      },
    );
  }
  const waitMs = throttle.admit(address, now);
  if (waitMs > 0) {
    throw new AuthThrottledError(waitMs);
  }
  // A refused key counts; a store outage (503) does not.
  return settled(
    () => authenticate(req.headers, keys, now),
    (error) => throttle.settle(address, error instanceof AuthenticationError, now),
  );
}

/** Runs `run` and calls `done` once it settled, with its error if it failed, sync or not. */
function settled(
  run: () => ApiKeyInfo | Promise<ApiKeyInfo>,
  done: (error?: unknown) => void,
): ApiKeyInfo | Promise<ApiKeyInfo> {
  let outcome: ApiKeyInfo | Promise<ApiKeyInfo>;
  try {
    outcome = run();
  } catch (error) {
    done(error);
    throw error;
  }
  if (outcome instanceof Promise) {
    return outcome.then(
      (info) => {
        done();
        return info;
      },
      (error: unknown) => {
        done(error);
        throw error;
      },
    );
  }
  done();
  return outcome;
}

/**
 * {@link authenticate} decided once per request: the outcome, failures included, is kept on
 * `ctx`, and a later call answers from there. The early middleware swallows a failure so
 * that routing can answer 404 first; without this the AuthGuard would ask a key store that
 * is down again and make the client wait out its timeout twice.
 * Failed keys of the issued shape count against the client address (AuthFailureThrottle);
 * past its limit the address gets 429 `too_many_failed_authentications` without a store
 * lookup, unless a key it presents is already cached.
 */
export function authenticateRequest(
  req: AuthRequest,
  keys: ApiKeyService,
): ApiKeyInfo | Promise<ApiKeyInfo> {
  const { ctx } = req;
  if (ctx.key !== undefined) {
    return ctx.key;
  }
  if (ctx.authFailure !== undefined) {
    throw ctx.authFailure.error;
  }
  let outcome: ApiKeyInfo | Promise<ApiKeyInfo>;
  try {
    outcome = authenticateCounted(req, keys, Date.now());
  } catch (error) {
    ctx.authFailure = { error };
    throw error;
  }
  if (outcome instanceof Promise) {
    return outcome.then(
      (info) => accepted(ctx, info),
      (error: unknown) => {
        ctx.authFailure = { error };
        throw error;
      },
    );
  }
  return accepted(ctx, outcome);
}

function accepted(ctx: RequestContext, info: ApiKeyInfo): ApiKeyInfo {
  ctx.keyId = info.id;
  ctx.team = info.team;
  ctx.key = info;
  return info;
}
