import { consoleConfig } from './console.config';
import { parseEnvBool } from './env-bool';
import { ConfigValidationError, validateEnvironment } from './index';
import { readObservabilityConfig } from './observability.config';
import { storeConfig } from './store.config';

const TRUE = ['true', 'TRUE', '1', 'yes', 'Yes', 'on', ' ON '];
const FALSE = ['false', 'False', '0', 'no', 'NO', 'off', ' off\t'];
const BAD = ['disabled', 'enabled', 'y', 'n', '2', 'truthy', 'of'];

/** Every boolean variable, read through the namespace that owns it. */
const READERS: Record<string, (env: Record<string, string>) => boolean> = {
  CONSOLE_ENABLED: (env) => withEnv(env, () => consoleConfig().enabled),
  BUDGET_COUNT_PROTECTIONS: (env) => withEnv(env, () => storeConfig().budgetCountsProtections),
  METRICS_PER_KEY: (env) => readObservabilityConfig(env).metricsPerKey,
  OTEL_SDK_DISABLED: (env) =>
    !readObservabilityConfig({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })
      .tracingEnabled,
};

const DEFAULTS: Record<string, boolean> = {
  CONSOLE_ENABLED: true,
  BUDGET_COUNT_PROTECTIONS: false,
  METRICS_PER_KEY: false,
  OTEL_SDK_DISABLED: false,
};

function withEnv<T>(env: Record<string, string>, read: () => T): T {
  const saved = process.env;
  process.env = { ...env };
  try {
    return read();
  } finally {
    process.env = saved;
  }
}

/** The problems startup would report for `env`, from whichever validation owns the variable. */
function problemsOf(env: Record<string, string>): string[] {
  try {
    validateEnvironment(env);
    readObservabilityConfig(env);
  } catch (e) {
    if (e instanceof ConfigValidationError) {
      return e.problems;
    }
    throw e;
  }
  return [];
}

describe('parseEnvBool', () => {
  it('reads true/false, 1/0, yes/no and on/off in any case, trimmed', () => {
    expect(TRUE.map(parseEnvBool)).toEqual(TRUE.map(() => true));
    expect(FALSE.map(parseEnvBool)).toEqual(FALSE.map(() => false));
    expect(BAD.map(parseEnvBool)).toEqual(BAD.map(() => undefined));
  });
});

describe.each(Object.keys(READERS))('the boolean variable %s', (name) => {
  const read = READERS[name];

  it('accepts every documented spelling', () => {
    for (const value of TRUE) {
      expect([value, read({ [name]: value })]).toEqual([value, true]);
    }
    for (const value of FALSE) {
      expect([value, read({ [name]: value })]).toEqual([value, false]);
    }
  });

  it('keeps its default when unset, empty or blank', () => {
    expect(read({})).toBe(DEFAULTS[name]);
    expect(read({ [name]: '' })).toBe(DEFAULTS[name]);
    expect(read({ [name]: '  ' })).toBe(DEFAULTS[name]);
    expect(problemsOf({ [name]: '' })).toEqual([]);
  });

  it('stops the boot on any other value, naming the variable and the accepted values', () => {
    for (const value of BAD) {
      expect(problemsOf({ [name]: value })).toEqual([
        `${name}: ${name} must be one of true/false, 1/0, yes/no or on/off`,
      ]);
    }
  });
});
