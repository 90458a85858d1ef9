import type { ConfigService } from '@nestjs/config';
import { AuthenticationError, AuthThrottledError } from '../common/errors/gateway-errors';
import type { AllConfig } from '../config';
import { KeyCache } from '../keys/key-cache';
import type { KeyRepository, ManagedKeyRecord } from '../keys/key-record';
import { issueSecret } from '../keys/key-secret';
import { fakeAuthConfig } from '../testing/fake-config';
import { ApiKeyService } from './api-key.service';
import { AuthFailureThrottle } from './auth-throttle';
import { type AuthRequest, authenticateRequest } from './authenticate';

function record(id: string): ManagedKeyRecord {
  return {
    id,
    name: id,
    owner: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    revokedReason: null,
    models: null,
    endpoints: null,
    limits: {},
    budget: null,
    metadata: {},
    secrets: [],
  };
}

/** Two stored keys over a repository that counts its reads; a throttle of 3 failures a minute. */
function setup(): { keys: ApiKeyService; reads: () => number; real: string[] } {
  const real = [issueSecret(), issueSecret()];
  const stored = new Map(real.map((s, i) => [s.hash, record(`key_${i}`)]));
  let reads = 0;
  const repo = {
    findBySecretHash: (hash: string) => {
      reads++;
      const key = stored.get(hash);
      return Promise.resolve(key ? { key, secretExpiresAt: null } : undefined);
    },
  } as unknown as KeyRepository;
  const throttle = new AuthFailureThrottle({
    get: () => ({ failureLimit: 3, failureWindowMs: 60_000 }),
  } as unknown as ConfigService<AllConfig, true>);
  const keys = new ApiKeyService(
    fakeAuthConfig(['static-key']),
    new KeyCache(repo, 60_000),
    throttle,
  );
  return { keys, reads: () => reads, real: real.map((s) => s.secret) };
}

const request = (key: string, ip = '10.0.0.1'): AuthRequest => ({
  headers: { authorization: `Bearer ${key}` },
  ctx: { requestId: 'r', startedAt: 0n },
  ip,
});

async function outcome(keys: ApiKeyService, req: AuthRequest): Promise<unknown> {
  try {
    return await authenticateRequest(req, keys);
  } catch (error) {
    return error;
  }
}

describe('authenticateRequest with the failed-authentication throttle', () => {
  it('stops asking the store for an address past the limit, and keeps its cached keys working', async () => {
    const { keys, reads, real } = setup();
    expect(await outcome(keys, request(real[0]))).toMatchObject({ id: 'key_0' }); // cached now
    for (let i = 0; i < 3; i++) {
      expect(await outcome(keys, request(issueSecret().secret))).toBeInstanceOf(
        AuthenticationError,
      );
    }
    expect(reads()).toBe(4);
    for (let i = 0; i < 100; i++) {
      const refused = await outcome(keys, request(issueSecret().secret));
      expect(refused).toBeInstanceOf(AuthThrottledError);
      expect(refused).toMatchObject({ status: 429, headers: { 'retry-after': '60' } });
    }
    expect(reads()).toBe(4);
    // A key already cached still works from that address; one that is not waits.
    expect(await outcome(keys, request(real[0]))).toMatchObject({ id: 'key_0' });
    expect(await outcome(keys, request(real[1]))).toBeInstanceOf(AuthThrottledError);
    expect(await outcome(keys, request('static-key'))).toMatchObject({ source: 'static' });
    // Another address is looked up as before.
    expect(await outcome(keys, request(real[1], '10.0.0.2'))).toMatchObject({ id: 'key_1' });
    expect(reads()).toBe(5);
  });

  it('counts only keys of the issued shape, the ones the store is asked about', async () => {
    const { keys, reads } = setup();
    for (let i = 0; i < 20; i++) {
      expect(await outcome(keys, request(`not-issued-${i}`))).toBeInstanceOf(AuthenticationError);
    }
    expect(await outcome(keys, request(issueSecret().secret))).toBeInstanceOf(AuthenticationError);
    expect(reads()).toBe(1);
  });

  it('answers a repeated unknown key from the negative cache, and counts it', async () => {
    const { keys, reads } = setup();
    const guess = issueSecret().secret;
    for (let i = 0; i < 3; i++) {
      expect(await outcome(keys, request(guess))).toBeInstanceOf(AuthenticationError);
    }
    expect(reads()).toBe(1);
    expect(await outcome(keys, request(guess))).toBeInstanceOf(AuthThrottledError);
  });
});
