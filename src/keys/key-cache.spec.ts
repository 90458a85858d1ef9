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

  it('answers an unknown secret from the negative cache until its TTL, then reads again', async () => {
    let now = 0;
    const { repo, reads, answer } = fakeRepo();
    answer(undefined);
    const cache = new KeyCache(repo, 60_000, () => now, { ttlMs: 1000, maxEntries: 10 });
    // Concurrent lookups of one secret share one read.
    await Promise.all([cache.lookup('guess'), cache.lookup('guess'), cache.lookup('guess')]);
    expect(reads()).toBe(1);
    now = 999;
    expect(cache.lookup('guess')).toEqual({ status: 'unknown' });
    now = 1000; // expired: never served stale, read again before answering
    const again = cache.lookup('guess');
    expect(again).toBeInstanceOf(Promise);
    expect(await again).toEqual({ status: 'unknown' });
    expect(reads()).toBe(2);
  });

  it('keeps at most its cap of unknown secrets, apart from the known keys, which a flood never evicts', async () => {
    const { repo, reads, answer } = fakeRepo();
    const cache = new KeyCache(repo, 60_000, Date.now, { ttlMs: 60_000, maxEntries: 3 });
    await cache.lookup('real');
    answer(undefined);
    for (let i = 0; i < 50; i++) {
      await cache.lookup(`guess-${i}`);
    }
    expect(cache.unknownSize).toBe(3);
    expect(cache.size).toBe(1);
    expect(cache.lookup('real')).toMatchObject({ status: 'active' });
    expect(cache.lookup('guess-49')).toEqual({ status: 'unknown' }); // the newest are kept
    expect(cache.lookup('guess-0')).toBeInstanceOf(Promise); // the oldest went first
    await Promise.resolve();
    expect(reads()).toBe(52);
  });

  it('forgets every unknown secret on a key change, so a key created with one works at once', async () => {
    const { repo, answer } = fakeRepo();
    answer(undefined);
    const cache = new KeyCache(repo, 60_000, Date.now, { ttlMs: 60_000, maxEntries: 10 });
    expect(await cache.lookup('imported')).toEqual({ status: 'unknown' });
    answer({ key: record({ id: 'key_new' }), secretExpiresAt: null });
    cache.invalidate('key_new');
    expect(await cache.lookup('imported')).toMatchObject({ status: 'active' });
  });

  it('does not negative-cache a read that a key change overtook', async () => {
    const { repo, reads, answer } = fakeRepo();
    answer(undefined);
    const cache = new KeyCache(repo, 60_000, Date.now, { ttlMs: 60_000, maxEntries: 10 });
    const inFlight = cache.lookup('imported'); // reads before the key exists...
    cache.invalidate('key_new'); // ...and the key is created meanwhile
    expect(await inFlight).toEqual({ status: 'unknown' });
    answer({ key: record({ id: 'key_new' }), secretExpiresAt: null });
    expect(await cache.lookup('imported')).toMatchObject({ status: 'active' });
    expect(reads()).toBe(2);
  });

  it('peeks at cached keys without reading the store', async () => {
    const { repo, reads } = fakeRepo();
    const cache = new KeyCache(repo, 60_000);
    expect(cache.peek('h')).toBeUndefined();
    await cache.lookup('h');
    expect(cache.peek('h')).toMatchObject({ status: 'active' });
    expect(reads()).toBe(1);
  });

  it('takes the earlier of the key and the secret expiry', async () => {
    const { repo, answer } = fakeRepo();
    answer({ key: record({ expiresAt: new Date(5000) }), secretExpiresAt: new Date(3000) });
    const cache = new KeyCache(repo, 60_000);
    expect(await cache.lookup('h')).toMatchObject({ info: { expiresAt: 3000 } });
  });
});
