import { type ManagedKeyLookup, UNKNOWN_KEY } from '../keys/managed-keys';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { fakeAuthConfig } from '../testing/fake-config';
import { ApiKeyService } from './api-key.service';
import { sha256Hex } from '../keys/key-secret';

const fakeConfig = fakeAuthConfig;

describe('ApiKeyService', () => {
  let warn: jest.SpyInstance;

  beforeEach(() => {
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => {
    warn.mockRestore();
  });

  it('accepts each configured key and rejects anything else', () => {
    const service = new ApiKeyService(fakeConfig(['key-one', 'key-two']));
    expect(service.verify('key-one')).toBeDefined();
    expect(service.verify('key-two')).toBeDefined();
    expect(service.verify('key-three')).toBeUndefined();
    expect(service.verify('key-one ')).toBeUndefined();
    expect(service.verify('')).toBeUndefined();
  });

  it('gives each key a stable 12-hex id that is not the key', () => {
    const a = new ApiKeyService(fakeConfig(['key-one', 'key-two']));
    const b = new ApiKeyService(fakeConfig(['key-one']));
    const id1 = a.verify('key-one')!.id;
    const id2 = a.verify('key-two')!.id;
    expect(id1).toMatch(/^[0-9a-f]{12}$/);
    expect(id1).not.toBe(id2);
    expect(b.verify('key-one')!.id).toBe(id1);
    expect(id1).not.toContain('key-one');
  });

  it('does not accept a development key when keys are configured', () => {
    const service = new ApiKeyService(fakeConfig(['real'], 'development', 'dev-key'));
    expect(service.verify('dev-key')).toBeUndefined();
    expect(warn).not.toHaveBeenCalled();
  });

  it('accepts the configured development key when no keys are set outside production', () => {
    const service = new ApiKeyService(fakeConfig([], 'development', 'dev-key'));
    expect(service.verify('dev-key')).toMatchObject({ name: 'GATEWAY_DEV_API_KEY' });
    expect(service.verify('other')).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('generates a random development key when none is given, and logs it', () => {
    new ApiKeyService(fakeConfig([], 'test'));
    new ApiKeyService(fakeConfig([], 'test'));
    const keys = warn.mock.calls.map((c) => /(gw-dev-\S+)/.exec(String(c[0]))?.[1]);
    expect(keys[0]).toBeDefined();
    expect(keys[1]).toBeDefined();
    expect(keys[0]).not.toBe(keys[1]);
  });

  it('accepts the generated development key it logged', () => {
    const service = new ApiKeyService(fakeConfig([], 'development'));
    const key = /(gw-dev-\S+)/.exec(String(warn.mock.calls[0][0]))![1];
    expect(service.verify(key)).toMatchObject({ name: 'development key' });
  });

  it('throws in production when no keys are configured', () => {
    expect(() => new ApiKeyService(fakeConfig([], 'production', 'dev-key'))).toThrow(
      /GATEWAY_API_KEYS/,
    );
  });

  it('starts in production without static keys when keys are issued into a key store', () => {
    const store = { lookup: () => Promise.resolve(undefined) } as unknown as ManagedKeyLookup;
    const service = new ApiKeyService(fakeConfig([], 'production', 'dev-key'), store);
    // No development key is made up in production: only issued keys will be accepted.
    expect(service.verify('dev-key')).toBeUndefined();
  });

  it('asks the key store only for secrets shaped like the ones it issues', () => {
    const lookup = jest.fn(() => Promise.resolve(UNKNOWN_KEY));
    const store = { lookup, info: () => undefined } as unknown as ManagedKeyLookup;
    const service = new ApiKeyService(fakeConfig(['static'], 'production'), store);
    expect(service.resolve('sk-random-guess')).toBe(UNKNOWN_KEY);
    expect(service.resolve(`gw-${'a'.repeat(42)}`)).toBe(UNKNOWN_KEY);
    expect(lookup).not.toHaveBeenCalled();
    void service.resolve(`gw-${'a'.repeat(43)}`);
    expect(lookup).toHaveBeenCalledTimes(1);
  });

  it('starts in production when keys are configured', () => {
    const service = new ApiKeyService(fakeConfig(['prod-key'], 'production'));
    expect(service.verify('prod-key')).toBeDefined();
  });
});

describe('ApiKeyService with a keys file', () => {
  function withFile(yaml: string, apiKeys: string[] = []): ApiKeyService {
    const dir = mkdtempSync(join(tmpdir(), 'gw-keys-'));
    const path = join(dir, 'keys.yaml');
    writeFileSync(path, yaml);
    const config = fakeConfig(apiKeys, 'production');
    const auth = config.get('auth', { infer: true });
    auth.keysFile = path;
    return new ApiKeyService(config);
  }

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  it('accepts the keys of the file, even in production without GATEWAY_API_KEYS', () => {
    const service = withFile(`keys:\n  - sha256: ${sha256Hex('file-key')}\n    name: team\n`);
    const info = service.verify('file-key');
    expect(info).toMatchObject({ id: sha256Hex('file-key').slice(0, 12), name: 'team' });
    expect(service.verify('other')).toBeUndefined();
  });

  it('gives each key its limits over the file defaults, and finds a key by id', () => {
    const service = withFile(
      `
defaults: { requests_per_minute: 100, tokens_per_minute: 1000 }
models:
  m1: { requests_per_minute: 5, tokens_per_minute: 50 }
keys:
  - sha256: ${sha256Hex('file-key')}
    limits: { tokens_per_minute: 2000 }
    models:
      m1: { tokens_per_minute: 70 }
      m2: { max_concurrent_streams: 1 }
`,
      ['env-key'],
    );
    const fileKey = service.verify('file-key')!;
    expect(fileKey.limits).toEqual({ requestsPerMinute: 100, tokensPerMinute: 2000 });
    expect(fileKey.modelLimits.get('m1')).toEqual({ requestsPerMinute: 5, tokensPerMinute: 70 });
    expect(fileKey.modelLimits.get('m2')).toEqual({ maxConcurrentStreams: 1 });
    const envKey = service.verify('env-key')!;
    expect(envKey.limits).toEqual({ requestsPerMinute: 100, tokensPerMinute: 1000 });
    expect(envKey.modelLimits.get('m1')).toEqual({ requestsPerMinute: 5, tokensPerMinute: 50 });
    expect(service.info(fileKey.id)).toBe(fileKey);
    expect(service.info('000000000000')).toBeUndefined();
  });

  it('takes the settings of a key listed in both places from the file', () => {
    const service = withFile(
      `keys:\n  - sha256: ${sha256Hex('both')}\n    limits: { requests_per_minute: 7 }\n`,
      ['both'],
    );
    expect(service.verify('both')!.limits).toEqual({ requestsPerMinute: 7 });
  });

  it('tells whether any key has a given kind of limit', () => {
    const service = withFile(
      `keys:\n  - sha256: ${sha256Hex('k')}\n    models:\n      m: { tokens_per_minute: 9 }\n`,
    );
    expect(service.anyLimit((l) => (l.tokensPerMinute ?? 0) > 0)).toBe(true);
    expect(service.anyLimit((l) => (l.requestsPerMinute ?? 0) > 0)).toBe(false);
    expect(service.modelsWithLimits()).toEqual(new Set(['m']));
  });

  it('names every static key where it is configured, never "(unnamed)" nor by the key', () => {
    process.env.NAMED_BY_VARIABLE_KEY = 'var-key';
    try {
      const service = withFile(
        [
          'keys:',
          `  - { sha256: ${sha256Hex('named')}, name: search-team }`,
          '  - { key_env: NAMED_BY_VARIABLE_KEY }',
          `  - { sha256: ${sha256Hex('bare')} }`,
          `  - { sha256: ${sha256Hex('env-2')}, name: batch }`,
        ].join('\n'),
        ['env-1', 'env-2'],
      );
      expect(
        ['named', 'var-key', 'bare', 'env-1', 'env-2'].map((k) => service.verify(k)?.name),
      ).toEqual([
        'search-team',
        'NAMED_BY_VARIABLE_KEY',
        'GATEWAY_KEYS_FILE keys[2]',
        'GATEWAY_API_KEYS #1',
        'batch', // listed in both places: the file's name
      ]);
      expect(service.staticKeys().every((k) => typeof k.name === 'string')).toBe(true);
    } finally {
      delete process.env.NAMED_BY_VARIABLE_KEY;
    }
  });

  it('refuses to start on an invalid keys file', () => {
    expect(() => withFile('keys:\n  - key_env: NOT_SET_ANYWHERE_123\n')).toThrow(
      /keys\[0\]\.key_env: NOT_SET_ANYWHERE_123 is not set/,
    );
  });
});
