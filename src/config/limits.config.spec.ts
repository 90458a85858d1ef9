import { ConfigValidationError, validateEnvironment } from './index';
import { limitsConfig } from './limits.config';

describe('limits configuration', () => {
  const saved = process.env;
  afterEach(() => {
    process.env = saved;
  });

  it('defaults to no rate limits, in-memory counters, fail open and generous request bounds', () => {
    process.env = {};
    expect(limitsConfig()).toEqual({
      defaults: { requestsPerMinute: 0, tokensPerMinute: 0, maxConcurrentStreams: 0 },
      defaultOutputTokens: 1024,
      failMode: 'open',
      redisUrl: undefined,
      redisKeyPrefix: 'gw:rl:',
      redisCommandTimeoutMs: 250,
      maxMessages: 2048,
      maxTools: 128,
      maxContentParts: 4096,
    });
  });

  it('reads every variable as its type', () => {
    process.env = {
      RATE_LIMIT_REQUESTS_PER_MINUTE: '60',
      RATE_LIMIT_TOKENS_PER_MINUTE: '100000',
      RATE_LIMIT_MAX_CONCURRENT_STREAMS: '4',
      RATE_LIMIT_DEFAULT_OUTPUT_TOKENS: '512',
      RATE_LIMIT_FAIL_MODE: 'closed',
      REDIS_URL: 'redis://redis:6379/0',
      REDIS_KEY_PREFIX: 'prod:rl:',
      REDIS_COMMAND_TIMEOUT_MS: '100',
      REQUEST_MAX_MESSAGES: '10',
      REQUEST_MAX_TOOLS: '0',
      REQUEST_MAX_CONTENT_PARTS: '20',
    };
    expect(limitsConfig()).toEqual({
      defaults: { requestsPerMinute: 60, tokensPerMinute: 100000, maxConcurrentStreams: 4 },
      defaultOutputTokens: 512,
      failMode: 'closed',
      redisUrl: 'redis://redis:6379/0',
      redisKeyPrefix: 'prod:rl:',
      redisCommandTimeoutMs: 100,
      maxMessages: 10,
      maxTools: 0,
      maxContentParts: 20,
    });
  });

  it.each([
    ['RATE_LIMIT_REQUESTS_PER_MINUTE', '-1'],
    ['RATE_LIMIT_TOKENS_PER_MINUTE', 'lots'],
    ['RATE_LIMIT_MAX_CONCURRENT_STREAMS', '1.5'],
    ['RATE_LIMIT_DEFAULT_OUTPUT_TOKENS', '0'],
    ['RATE_LIMIT_FAIL_MODE', 'sometimes'],
    ['REDIS_URL', 'http://localhost:6379'],
    ['REDIS_KEY_PREFIX', 'has space'],
    ['REDIS_COMMAND_TIMEOUT_MS', '0'],
    ['REQUEST_MAX_MESSAGES', '0'],
    ['REQUEST_MAX_CONTENT_PARTS', 'x'],
  ])('refuses to boot with %s=%s', (name, value) => {
    let caught: unknown;
    try {
      validateEnvironment({ [name]: value });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigValidationError);
    expect((caught as ConfigValidationError).problems.every((p) => p.startsWith(`${name}: `))).toBe(
      true,
    );
  });

  it('accepts a keys file instead of GATEWAY_API_KEYS in production', () => {
    expect(() =>
      validateEnvironment({
        NODE_ENV: 'production',
        GATEWAY_KEYS_FILE: '/etc/gateway/keys.yaml',
        KEY_STORE: 'off',
        CONSOLE_ENABLED: 'false',
      }),
    ).not.toThrow();
  });
});
