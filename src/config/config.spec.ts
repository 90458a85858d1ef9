import { appConfig } from './app.config';
import { authConfig } from './auth.config';
import { catalogConfig } from './catalog.config';
import { ConfigValidationError, validateEnvironment } from './index';
import { protectionsConfig } from './protections.config';
import { upstreamConfig } from './upstream.config';

function problemsOf(env: Record<string, unknown>): string[] {
  try {
    validateEnvironment(env);
  } catch (e) {
    if (e instanceof ConfigValidationError) {
      return e.problems;
    }
    throw e;
  }
  throw new Error('expected validateEnvironment to throw');
}

/** What a production deployment needs besides client keys: a database and a shared console secret. */
const PROD = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://gateway@db.internal:5432/gateway',
  CONSOLE_SESSION_SECRET: 'shared-console-session-secret-0123456789',
};

describe('validateEnvironment', () => {
  it('accepts an empty environment and returns it unchanged', () => {
    const env = {};
    expect(validateEnvironment(env)).toBe(env);
  });

  it('accepts a fully specified valid environment', () => {
    const env = {
      ...PROD,
      PORT: '8080',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'debug',
      MAX_BODY_SIZE: '2MB',
      SHUTDOWN_TIMEOUT_MS: '0',
      SSE_KEEPALIVE_MS: '100',
      CORS_ORIGINS: 'https://a.example',
      GATEWAY_API_KEYS: 'k1,k2',
      CATALOG_PATH: '/etc/catalog.yaml',
      LOCAL_MODEL_TOKEN_DELAY_MS: '0',
      UPSTREAM_CONNECT_TIMEOUT_MS: '1',
      UPSTREAM_MAX_CONNECTIONS: '0',
      OPENAI_BASE_URL: 'http://localhost:9999/v1',
      ANTHROPIC_BASE_URL: 'https://api.anthropic.com',
    };
    expect(validateEnvironment(env)).toBe(env);
  });

  it('takes TRUST_PROXY and CONSOLE_PUBLIC_URL in the forms documented, and names them otherwise', () => {
    for (const TRUST_PROXY of ['true', 'false', '2', 'loopback', '10.1.2.3, ::1', '10.0.0.0/8']) {
      expect(() => validateEnvironment({ TRUST_PROXY })).not.toThrow();
    }
    for (const CONSOLE_PUBLIC_URL of ['https://llm.example.com', 'http://10.0.0.5:8080/']) {
      expect(() => validateEnvironment({ CONSOLE_PUBLIC_URL })).not.toThrow();
    }
    expect(
      problemsOf({ TRUST_PROXY: 'everyone', CONSOLE_PUBLIC_URL: 'https://x.example/console' }),
    ).toEqual([
      expect.stringMatching(/^TRUST_PROXY: /),
      expect.stringMatching(/^CONSOLE_PUBLIC_URL: /),
    ]);
    for (const TRUST_PROXY of ['10.0.0.0/33', '1.2.3', 'loopback,', '10.0.0.0/8/8']) {
      expect(problemsOf({ TRUST_PROXY })).toEqual([expect.stringMatching(/^TRUST_PROXY: /)]);
    }
    for (const CONSOLE_PUBLIC_URL of ['ftp://x.example', 'x.example', 'https://x.example/?a=1']) {
      expect(problemsOf({ CONSOLE_PUBLIC_URL })).toEqual([
        expect.stringMatching(/^CONSOLE_PUBLIC_URL: /),
      ]);
    }
  });

  it('ignores variables that belong to no namespace', () => {
    expect(() => validateEnvironment({ PATH: '/usr/bin', SOMETHING_ELSE: 'x' })).not.toThrow();
  });

  it('lists every invalid variable in one ConfigValidationError', () => {
    const problems = problemsOf({
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      UPSTREAM_CONNECT_TIMEOUT_MS: '-1',
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^PORT: /),
        expect.stringMatching(/^LOG_LEVEL: /),
        expect.stringMatching(/^UPSTREAM_CONNECT_TIMEOUT_MS: /),
      ]),
    );
    const named = new Set(problems.map((p) => p.split(':')[0]));
    expect([...named].sort()).toEqual(['LOG_LEVEL', 'PORT', 'UPSTREAM_CONNECT_TIMEOUT_MS']);
  });

  it('puts every problem in the error message', () => {
    let caught: unknown;
    try {
      validateEnvironment({ PORT: '70000', NODE_ENV: 'staging' });
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ConfigValidationError);
    const err = caught as ConfigValidationError;
    expect(err.name).toBe('ConfigValidationError');
    expect(err.message).toContain('PORT');
    expect(err.message).toContain('NODE_ENV');
    expect(err.problems).toHaveLength(2);
  });

  it.each([
    ['PORT', '-1'],
    ['PORT', '3000.5'],
    ['MAX_BODY_SIZE', 'ten megabytes'],
    ['SSE_KEEPALIVE_MS', '99'],
    ['SHUTDOWN_TIMEOUT_MS', '-5'],
    ['LOCAL_MODEL_TOKEN_DELAY_MS', 'fast'],
    ['UPSTREAM_HEADERS_TIMEOUT_MS', '0'],
    ['UPSTREAM_MAX_CONNECTIONS', '-1'],
    ['OPENAI_BASE_URL', 'api.openai.com'],
    ['ANTHROPIC_BASE_URL', 'ftp://example.com'],
  ])('rejects %s=%s', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.startsWith(`${name}: `))).toBe(true);
  });

  it('treats empty strings as unset', () => {
    expect(() =>
      validateEnvironment({
        PORT: '',
        LOG_LEVEL: '',
        UPSTREAM_CONNECT_TIMEOUT_MS: '',
        OPENAI_BASE_URL: '',
        NODE_ENV: '',
      }),
    ).not.toThrow();
  });

  it('requires GATEWAY_API_KEYS when NODE_ENV=production', () => {
    const problems = problemsOf({ ...PROD });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.startsWith('GATEWAY_API_KEYS: '))).toBe(true);
  });

  it('treats an empty GATEWAY_API_KEYS as missing in production', () => {
    const problems = problemsOf({ ...PROD, GATEWAY_API_KEYS: '' });
    expect(problems.some((p) => p.startsWith('GATEWAY_API_KEYS: '))).toBe(true);
  });

  it('does not require GATEWAY_API_KEYS in production when the gateway issues its own keys', () => {
    const token = 'admin-token-0123456789';
    expect(() => validateEnvironment({ ...PROD, GATEWAY_ADMIN_TOKEN: token })).not.toThrow();
    const oidc = { ...PROD, CONSOLE_OIDC_ISSUER: 'https://id.example.com' };
    let problems: string[] = [];
    try {
      validateEnvironment(oidc);
    } catch {
      problems = problemsOf(oidc); // the console's own settings may be incomplete
    }
    expect(problems).not.toContainEqual(expect.stringMatching(/^GATEWAY_API_KEYS: /));
    // Without the key store nothing can be issued: a static key is required again.
    expect(problemsOf({ ...PROD, GATEWAY_ADMIN_TOKEN: token, KEY_STORE: 'off' })).toContainEqual(
      expect.stringMatching(/^GATEWAY_API_KEYS: /),
    );
  });

  it('does not require GATEWAY_API_KEYS outside production', () => {
    expect(() => validateEnvironment({ NODE_ENV: 'development' })).not.toThrow();
    expect(() => validateEnvironment({ NODE_ENV: 'test' })).not.toThrow();
  });

  it('rejects a GATEWAY_API_KEYS that lists no key in production', () => {
    const problems = problemsOf({ ...PROD, GATEWAY_API_KEYS: ' , ,' });
    expect(problems).toEqual([expect.stringMatching(/^GATEWAY_API_KEYS: /)]);
  });
});

describe('production defaults', () => {
  const KEYS = { NODE_ENV: 'production', GATEWAY_API_KEYS: 'k1' };
  const named = (env: Record<string, unknown>): string[] =>
    problemsOf(env).map((p) => p.split(':')[0]);

  it('refuses production without DATABASE_URL or DATA_DIR, naming both and how to fix it', () => {
    const problems = problemsOf({ ...KEYS, CONSOLE_SESSION_SECRET: PROD.CONSOLE_SESSION_SECRET });
    expect(problems).toEqual([expect.stringMatching(/^DATABASE_URL: /)]);
    expect(problems[0]).toContain('DATA_DIR');
    expect(problems[0]).toContain('NODE_ENV=production');
    expect(problems[0]).toContain('KEY_STORE=off');
  });

  it('lists both refusals at once with every other bad variable', () => {
    expect([...new Set(named({ ...KEYS, PORT: 'x' }))].sort()).toEqual([
      'CONSOLE_SESSION_SECRET',
      'DATABASE_URL',
      'PORT',
    ]);
  });

  it('takes an explicit DATA_DIR, or no key store, instead of DATABASE_URL', () => {
    const secret = { CONSOLE_SESSION_SECRET: PROD.CONSOLE_SESSION_SECRET };
    expect(() => validateEnvironment({ ...KEYS, ...secret, DATA_DIR: '/srv/gw' })).not.toThrow();
    expect(() => validateEnvironment({ ...KEYS, ...secret, KEY_STORE: 'off' })).not.toThrow();
    // An empty DATA_DIR is unset, as everywhere else.
    expect(named({ ...KEYS, ...secret, DATA_DIR: '' })).toEqual(['DATABASE_URL']);
  });

  it('refuses production with the console on and no CONSOLE_SESSION_SECRET, naming the switch', () => {
    const db = { DATABASE_URL: PROD.DATABASE_URL };
    for (const on of [{}, { CONSOLE_ENABLED: 'true' }, { CONSOLE_ENABLED: 'yes' }]) {
      const problems = problemsOf({ ...KEYS, ...db, ...on });
      expect(problems).toEqual([expect.stringMatching(/^CONSOLE_SESSION_SECRET: /)]);
      expect(problems[0]).toContain('CONSOLE_ENABLED');
    }
    expect(() => validateEnvironment({ ...KEYS, ...db, CONSOLE_ENABLED: 'false' })).not.toThrow();
    // A malformed switch is reported as itself, not as a missing secret.
    expect(named({ ...KEYS, ...db, CONSOLE_ENABLED: 'maybe' })).toEqual(['CONSOLE_ENABLED']);
    // Too short is refused everywhere, as before.
    expect(named({ CONSOLE_SESSION_SECRET: 'short' })).toEqual(['CONSOLE_SESSION_SECRET']);
  });

  it('keeps development and test free of both requirements', () => {
    for (const NODE_ENV of ['development', 'test', '']) {
      expect(() => validateEnvironment({ NODE_ENV })).not.toThrow();
    }
    expect(named({ DATABASE_URL: 'mysql://x' })).toEqual(['DATABASE_URL']);
  });
});

describe('protections configuration', () => {
  it('reads the protection defaults and forces every protection by name', () => {
    const env = {
      PROTECTIONS_FORCE: 'system_prompt_filter, shadow_agent_validation',
      SHADOW_AGENT_MODEL: 'judge-mini',
      SHADOW_AGENT_TIMEOUT_MS: '2500',
      SYSTEM_PROMPT_FILTER_MIN_OVERLAP: '5',
      PROMPT_INJECTION_DETECTOR_MODEL: 'judge-mini',
    };
    expect(validateEnvironment(env)).toBe(env);
    const saved = process.env;
    process.env = { ...env };
    const config = (() => {
      try {
        return protectionsConfig();
      } finally {
        process.env = saved;
      }
    })();
    expect(config).toEqual({
      forced: ['system_prompt_filter', 'shadow_agent_validation'],
      promptInjectionThreshold: 0.5,
      promptInjectionDetectorModel: 'judge-mini',
      promptInjectionDetectors: {
        defaultBackend: 'local',
        timeoutMs: 2000,
        failMode: 'open',
        cacheSize: 10_000,
        http: {
          url: undefined,
          format: 'tei',
          labels: ['injection', 'malicious', 'jailbreak', 'unsafe', 'label_1'],
          classIndex: 1,
          inputName: 'text',
          apiKey: undefined,
          maxChars: 2000,
        },
      },
      systemPromptFilterMinOverlap: 5,
      shadowAgentModel: 'judge-mini',
      shadowAgentTimeoutMs: 2500,
    });
  });

  it('requires SHADOW_AGENT_MODEL when the shadow agent is forced on', () => {
    expect(problemsOf({ PROTECTIONS_FORCE: 'shadow_agent_validation' })).toEqual([
      expect.stringContaining('SHADOW_AGENT_MODEL'),
    ]);
  });

  it('rejects out-of-range filter and shadow defaults and unknown forced names', () => {
    const named = problemsOf({
      SYSTEM_PROMPT_FILTER_MIN_OVERLAP: '2',
      SHADOW_AGENT_TIMEOUT_MS: '50',
      PROTECTIONS_FORCE: 'not a list!',
    }).map((p) => p.split(':')[0]);
    expect(named.sort()).toEqual([
      'PROTECTIONS_FORCE',
      'SHADOW_AGENT_TIMEOUT_MS',
      'SYSTEM_PROMPT_FILTER_MIN_OVERLAP',
    ]);
  });
});

describe('config namespaces', () => {
  const saved = process.env;

  function withEnv(vars: Record<string, string>): void {
    process.env = { ...vars };
  }

  afterEach(() => {
    process.env = saved;
  });

  it('appConfig gives the documented defaults on an empty environment', () => {
    withEnv({});
    expect(appConfig()).toEqual({
      nodeEnv: 'development',
      port: 3000,
      host: '0.0.0.0',
      listenBacklog: 4096,
      logLevel: 'info',
      maxBodySize: '10mb',
      shutdownTimeoutMs: 30_000,
      shutdownDrainDelayMs: 5_000,
      sseKeepaliveMs: 15_000,
      corsOrigins: [],
      trustProxy: false,
    });
  });

  it('appConfig converts numbers, lower-cases the body size and splits CORS origins', () => {
    withEnv({
      NODE_ENV: 'test',
      PORT: '8081',
      HOST: '127.0.0.1',
      LISTEN_BACKLOG: '1024',
      LOG_LEVEL: 'warn',
      MAX_BODY_SIZE: '5MB',
      SHUTDOWN_TIMEOUT_MS: '1500',
      SHUTDOWN_DRAIN_DELAY_MS: '0',
      SSE_KEEPALIVE_MS: '250',
      CORS_ORIGINS: ' https://a.example , https://b.example,,',
      TRUST_PROXY: '10.0.0.0/8, loopback',
    });
    const cfg = appConfig();
    expect(cfg).toEqual({
      nodeEnv: 'test',
      port: 8081,
      host: '127.0.0.1',
      listenBacklog: 1024,
      logLevel: 'warn',
      maxBodySize: '5mb',
      shutdownTimeoutMs: 1500,
      shutdownDrainDelayMs: 0,
      sseKeepaliveMs: 250,
      corsOrigins: ['https://a.example', 'https://b.example'],
      trustProxy: ['10.0.0.0/8', 'loopback'],
    });
    expect(typeof cfg.port).toBe('number');
  });

  it('refuses a LISTEN_BACKLOG that is not a count of connections', () => {
    for (const LISTEN_BACKLOG of ['0', '-5', '100000', 'many']) {
      expect(new Set(problemsOf({ LISTEN_BACKLOG }).map((p) => p.split(':')[0]))).toEqual(
        new Set(['LISTEN_BACKLOG']),
      );
    }
  });

  it('appConfig uses defaults for variables set to the empty string', () => {
    withEnv({ PORT: '', LOG_LEVEL: '', CORS_ORIGINS: '' });
    const cfg = appConfig();
    expect(cfg.port).toBe(3000);
    expect(cfg.logLevel).toBe('info');
    expect(cfg.corsOrigins).toEqual([]);
  });

  it('authConfig splits and trims the key list', () => {
    withEnv({ GATEWAY_API_KEYS: ' key-a ,key-b,, ', GATEWAY_DEV_API_KEY: 'dev-1' });
    expect(authConfig()).toMatchObject({ apiKeys: ['key-a', 'key-b'], devApiKey: 'dev-1' });
  });

  it('authConfig has no keys and no dev key by default', () => {
    withEnv({});
    expect(authConfig()).toEqual({
      apiKeys: [],
      devApiKey: undefined,
      failureLimit: 50,
      failureWindowMs: 60_000,
    });
  });

  it('authConfig reads the failed-authentication throttle, 0 turning it off', () => {
    withEnv({ AUTH_FAILURE_LIMIT: '0', AUTH_FAILURE_WINDOW_MS: '5000' });
    expect(authConfig()).toMatchObject({ failureLimit: 0, failureWindowMs: 5000 });
  });

  it('catalogConfig defaults to config/catalog.yaml and a 20 ms token delay', () => {
    withEnv({});
    expect(catalogConfig()).toEqual({ path: 'config/catalog.yaml', localTokenDelayMs: 20 });
  });

  it('catalogConfig reads CATALOG_PATH and LOCAL_MODEL_TOKEN_DELAY_MS', () => {
    withEnv({ CATALOG_PATH: '/srv/cat.yaml', LOCAL_MODEL_TOKEN_DELAY_MS: '0' });
    expect(catalogConfig()).toEqual({ path: '/srv/cat.yaml', localTokenDelayMs: 0 });
  });

  it('upstreamConfig gives the documented defaults', () => {
    withEnv({});
    expect(upstreamConfig()).toEqual({
      connectTimeoutMs: 10_000,
      headersTimeoutMs: 300_000,
      bodyTimeoutMs: 120_000,
      maxConnections: 0,
      keepAliveTimeoutMs: 60_000,
      maxAnswerBytes: 32 * 1024 * 1024,
      maxEventBytes: 8 * 1024 * 1024,
      streamHoldMs: 5_000,
      totalTimeoutMs: 600_000,
      retryAttempts: 3,
      retryBackoffMs: 200,
      retryMaxBackoffMs: 5_000,
      retryBudgetPercent: 20,
      ejectConsecutiveFailures: 5,
      ejectCooldownMs: 5_000,
      ejectMaxCooldownMs: 300_000,
    });
  });

  it('upstreamConfig reads every timeout as a number', () => {
    withEnv({
      UPSTREAM_CONNECT_TIMEOUT_MS: '11',
      UPSTREAM_HEADERS_TIMEOUT_MS: '22',
      UPSTREAM_BODY_TIMEOUT_MS: '33',
      UPSTREAM_MAX_CONNECTIONS: '44',
      UPSTREAM_KEEPALIVE_TIMEOUT_MS: '55',
      UPSTREAM_MAX_ANSWER_BYTES: '6600',
      UPSTREAM_MAX_EVENT_BYTES: '7700',
      UPSTREAM_STREAM_HOLD_MS: '0',
    });
    expect(upstreamConfig()).toEqual({
      connectTimeoutMs: 11,
      headersTimeoutMs: 22,
      bodyTimeoutMs: 33,
      maxConnections: 44,
      keepAliveTimeoutMs: 55,
      maxAnswerBytes: 6600,
      maxEventBytes: 7700,
      streamHoldMs: 0,
      totalTimeoutMs: 600_000,
      retryAttempts: 3,
      retryBackoffMs: 200,
      retryMaxBackoffMs: 5_000,
      retryBudgetPercent: 20,
      ejectConsecutiveFailures: 5,
      ejectCooldownMs: 5_000,
      ejectMaxCooldownMs: 300_000,
    });
  });
});
