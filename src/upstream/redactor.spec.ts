import type { CatalogProvider } from '../catalog/catalog.types';
import { InvalidRequestError, UpstreamHttpError } from '../common/errors/gateway-errors';
import { REDACTED, Redactor, configuredSecrets } from './redactor';

const provider = (over: Partial<CatalogProvider>): CatalogProvider => ({
  name: 'p',
  kind: 'openai',
  baseUrl: 'http://x',
  headers: {},
  available: true,
  ...over,
});

describe('configuredSecrets', () => {
  it('collects provider keys, added header values (also without their scheme), client keys and the Redis password', () => {
    const secrets = configuredSecrets(
      [
        provider({ apiKey: 'sk-openai-key-1' }),
        provider({
          headers: { 'x-team-token': 'team-token-1234', authorization: 'Bearer vendor-tok-99' },
        }),
      ],
      {
        auth: { apiKeys: ['client-key-0001'], devApiKey: 'dev-key-00001' },
        limits: { redisUrl: 'redis://:redis%40pass-1@localhost:6379' } as never,
      },
    );
    expect(secrets).toEqual(
      expect.arrayContaining([
        'sk-openai-key-1',
        'team-token-1234',
        'Bearer vendor-tok-99',
        'vendor-tok-99',
        'client-key-0001',
        'dev-key-00001',
        'redis@pass-1',
      ]),
    );
  });
});

describe('Redactor', () => {
  const redactor = new Redactor([
    'sk-upstream-secret',
    'short',
    'sk-upstream-secret-long',
    'a/b"c\\d-0123',
  ]);

  it('replaces every occurrence, the longest secret first', () => {
    expect(redactor.redact('key sk-upstream-secret-long and sk-upstream-secret again')).toBe(
      `key ${REDACTED} and ${REDACTED} again`,
    );
  });

  it('also finds a secret as JSON escapes it', () => {
    const json = JSON.stringify({ message: 'a/b"c\\d-0123' });
    expect(redactor.redact(json)).toBe(`{"message":"${REDACTED}"}`);
  });

  it('ignores values shorter than 8 characters and returns clean text as the same string', () => {
    const text = 'a short text';
    expect(redactor.redact(text)).toBe(text);
  });

  it('redacts an error message and param into an upstream error with the same status, code and headers', () => {
    const error = new UpstreamHttpError(429, 'rate_limit', 'limit for sk-upstream-secret', {
      code: 'rate_limit_exceeded',
      param: 'sk-upstream-secret',
      headers: { 'retry-after': '1' },
    });
    const redacted = redactor.redactError(error);
    expect(redacted).toBeInstanceOf(UpstreamHttpError);
    expect(redacted).toMatchObject({
      status: 429,
      kind: 'rate_limit',
      message: `limit for ${REDACTED}`,
      param: REDACTED,
      code: 'rate_limit_exceeded',
      headers: { 'retry-after': '1' },
    });
  });

  it('returns a clean error, or anything that is not a gateway error, as it is', () => {
    const clean = new InvalidRequestError('nothing to hide');
    expect(redactor.redactError(clean)).toBe(clean);
    const other = new Error('sk-upstream-secret');
    expect(redactor.redactError(other)).toBe(other);
  });
});
