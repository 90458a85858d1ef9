import { Logger } from '@nestjs/common';
import { KeyStoreUnavailableError } from '../common/errors/gateway-errors';
import { KeyCache } from './key-cache';
import type { KeyRepository, ManagedKeyRecord, SecretMatch } from './key-record';

function record(overrides: Partial<ManagedKeyRecord> = {}): ManagedKeyRecord {
  return {
    id: 'key_1',
    name: 'k',
    owner: null,
    createdAt: new Date(0),
    updatedAt: new Date(0),
    lastUsedAt: null,
    expiresAt: null,
    revokedAt: null,
    revokedReason: null,
    models: ['test-*'],
    endpoints: null,
    limits: { requests_per_minute: 5 },
    budget: null,
    metadata: {},
    secrets: [],
    ...overrides,
  };
}

/** A repository whose answers the test controls, counting reads. */
function fakeRepo(): {
  repo: KeyRepository;
  reads: () => number;
  answer: (m?: SecretMatch | Error) => void;
} {
  let next: SecretMatch | Error | undefined = { key: record(), secretExpiresAt: null };
  let reads = 0;
  const repo = {
    findBySecretHash: jest.fn(async () => {
      reads++;
      await Promise.resolve();
      if (next instanceof Error) {
        throw next;
      }
      return next;
    }),
  } as unknown as KeyRepository;
  return { repo, reads: () => reads, answer: (m) => (next = m) };
}

describe('KeyCache', () => {
  beforeEach(() => jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined));
  afterEach(() => jest.restoreAllMocks());

  it('reads the database once on a miss, then answers synchronously', async () => {
    const { repo, reads } = fakeRepo();
    const cache = new KeyCache(repo, 10_000);
    const [first, second] = await Promise.all([cache.lookup('h'), cache.lookup('h')]);
    expect(reads()).toBe(1);
    expect(first).toBe(second);
    const hit = cache.lookup('h');
    expect(hit).not.toBeInstanceOf(Promise);
    expect(hit).toMatchObject({
      status: 'active',
      info: { id: 'key_1', limits: { requestsPerMinute: 5 } },
    });
    expect(cache.info('key_1')?.scope?.models?.allows('test-gpt')).toBe(true);
    expect(cache.info('key_1')?.scope?.models?.allows('other')).toBe(false);
  });

  it('keeps serving cached keys when the database is down, and answers 503 for unknown ones', async () => {
    let now = 0;
    const { repo, answer } = fakeRepo();
    const cache = new KeyCache(repo, 1000, () => now);
    await cache.lookup('known');
    answer(new Error('connection refused'));
    now = 5000; // past the TTL: a background re-read fails, the entry stays
    expect(cache.lookup('known')).toMatchObject({ status: 'active' });
    await new Promise((r) => setImmediate(r));
    expect(cache.lookup('known')).toMatchObject({ status: 'active' });
    await expect(cache.lookup('other')).rejects.toBeInstanceOf(KeyStoreUnavailableError);
  });

  it('reloads a key when told it changed, so a revocation applies at once', async () => {
    const { repo, answer } = fakeRepo();
    const cache = new KeyCache(repo, 60_000);
    await cache.lookup('h');
    answer({ key: record({ revokedAt: new Date() }), secretExpiresAt: null });
    cache.invalidate('key_1');
    await new Promise((r) => setImmediate(r));
    expect(cache.lookup('h')).toEqual({ status: 'revoked' });
    expect(cache.info('key_1')).toBeUndefined();
  });

  it('forgets a changed key whose reload fails rather than keep serving it', async () => {
    const { repo, answer } = fakeRepo();
    const cache = new KeyCache(repo, 60_000);
    await cache.lookup('h');
    answer(new Error('down'));
    cache.invalidate('key_1');
    await new Promise((r) => setImmediate(r));
    await expect(cache.lookup('h')).rejects.toBeInstanceOf(KeyStoreUnavailableError);
  });

  it('remembers unknown secrets too, so a guessed key costs one read', async () => {
    const { repo, reads, answer } = fakeRepo();
    answer(undefined);
    const cache = new KeyCache(repo, 60_000);
    expect(await cache.lookup('guess')).toEqual({ status: 'unknown' });
    expect(cache.lookup('guess')).toEqual({ status: 'unknown' });
    expect(reads()).toBe(1);
  });

  it('takes the earlier of the key and the secret expiry', async () => {
    const { repo, answer } = fakeRepo();
    answer({ key: record({ expiresAt: new Date(5000) }), secretExpiresAt: new Date(3000) });
    const cache = new KeyCache(repo, 60_000);
    expect(await cache.lookup('h')).toMatchObject({ info: { expiresAt: 3000 } });
  });
});
