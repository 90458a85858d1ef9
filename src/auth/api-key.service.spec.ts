import { Logger } from '@nestjs/common';
import type { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';
import { ApiKeyService } from './api-key.service';

function fakeConfig(
  apiKeys: string[],
  nodeEnv: AllConfig['app']['nodeEnv'] = 'test',
  devApiKey?: string,
): ConfigService<AllConfig, true> {
  const values: Partial<AllConfig> = {
    auth: { apiKeys, devApiKey },
    app: {
      nodeEnv,
      port: 3000,
      host: '0.0.0.0',
      logLevel: 'info',
      maxBodySize: '10mb',
      shutdownTimeoutMs: 0,
      sseKeepaliveMs: 15000,
      corsOrigins: [],
    },
  };
  return {
    get: (ns: keyof AllConfig) => values[ns],
  } as unknown as ConfigService<AllConfig, true>;
}

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
    expect(service.verify('dev-key')).toBeDefined();
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
    expect(service.verify(key)).toBeDefined();
  });

  it('throws in production when no keys are configured', () => {
    expect(() => new ApiKeyService(fakeConfig([], 'production', 'dev-key'))).toThrow(
      /GATEWAY_API_KEYS/,
    );
  });

  it('starts in production when keys are configured', () => {
    const service = new ApiKeyService(fakeConfig(['prod-key'], 'production'));
    expect(service.verify('prod-key')).toBeDefined();
  });
});
