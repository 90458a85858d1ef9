import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigValidationError } from '../config';
import { loadKeysFile, parseKeysFile } from './keys-file';
import { sha256Hex } from '../keys/key-secret';

function problems(text: string, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseKeysFile(text, env, 'keys.yaml');
  } catch (e) {
    if (e instanceof ConfigValidationError) {
      return e.problems;
    }
    throw e;
  }
  throw new Error('expected a ConfigValidationError');
}

const HASH = sha256Hex('team-key');

describe('parseKeysFile', () => {
  it('reads keys by hash or by variable, with limits per key and per model', () => {
    const file = parseKeysFile(
      `
defaults: { requests_per_minute: 600 }
models:
  gpt-x: { tokens_per_minute: 5000 }
keys:
  - name: team
    sha256: ${HASH.toUpperCase()}
    limits: { requests_per_minute: 60, tokens_per_minute: 100000, max_concurrent_streams: 2 }
    models:
      gpt-x: { requests_per_minute: 10 }
  - key_env: OTHER_KEY
    admin: true
`,
      { OTHER_KEY: ' other-key ' },
      'keys.yaml',
    );
    expect(file.defaults).toEqual({ requestsPerMinute: 600 });
    expect(file.models).toEqual(new Map([['gpt-x', { tokensPerMinute: 5000 }]]));
    expect(file.keys).toEqual([
      {
        hash: HASH,
        name: 'team',
        limits: { requestsPerMinute: 60, tokensPerMinute: 100000, maxConcurrentStreams: 2 },
        models: new Map([['gpt-x', { requestsPerMinute: 10 }]]),
        admin: false,
      },
      {
        hash: sha256Hex('other-key'),
        name: undefined,
        keyEnv: 'OTHER_KEY',
        limits: {},
        models: new Map(),
        admin: true,
      },
    ]);
  });

  it('lists every shape problem at once, each with its path and the file name', () => {
    const found = problems(`
models:
  gpt-x: { tokens_per_minute: -1 }
  bad: 7
keys:
  - sha256: not-a-hash
  - sha256: ${HASH}
    key_env: ALSO_SET
  - key_env: UNSET_VARIABLE
  - sha256: ${HASH}
    limits: { requests_per_minute: 1.5, request_per_minute: 3 }
    admin: 'yes'
`);
    expect(found.every((p) => p.startsWith('GATEWAY_KEYS_FILE keys.yaml: '))).toBe(true);
    const text = found.join('\n');
    expect(text).toContain('keys[0].sha256: sha256 must be 64 hex characters');
    expect(text).toContain('keys[3].limits.requests_per_minute');
    expect(text).toContain('keys[3].admin: admin must be a boolean value');
    expect(text).toContain(
      'keys[3].limits.request_per_minute: property request_per_minute should not exist',
    );
  });

  it('reports semantic problems once the shape is valid', () => {
    const text = problems(`
models:
  gpt-x: { tokens_per_minute: -1 }
  bad: 7
keys:
  - sha256: ${HASH}
    key_env: ALSO_SET
  - key_env: UNSET_VARIABLE
  - sha256: ${HASH}
  - sha256: ${HASH}
`).join('\n');
    expect(text).toContain('models.gpt-x.tokens_per_minute');
    expect(text).toContain('models.bad: must be a mapping of limits');
    expect(text).toContain('keys[0]: give exactly one of sha256 or key_env');
    expect(text).toContain('keys[1].key_env: UNSET_VARIABLE is not set');
    expect(text).toContain('keys[3]: the same key as keys[2]');
  });

  it.each([
    ['not YAML', 'keys: [', /not valid YAML/],
    ['a list', '- a', /must be a mapping/],
    ['no keys list', 'defaults: {}', /keys/],
  ])('rejects %s', (_what, text, pattern) => {
    expect(problems(text).join('\n')).toMatch(pattern);
  });
});

describe('loadKeysFile', () => {
  it('reads a file from disk', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'gw-keys-')), 'keys.yaml');
    writeFileSync(path, `keys:\n  - sha256: ${HASH}\n`);
    expect(loadKeysFile(path, {}).keys[0].hash).toBe(HASH);
  });

  it('names the file it cannot read', () => {
    expect(() => loadKeysFile('/nonexistent/keys.yaml', {})).toThrow(
      /GATEWAY_KEYS_FILE \/nonexistent\/keys.yaml: cannot read the file: ENOENT/,
    );
  });
});

describe('config/keys.example.yaml', () => {
  it('is a valid keys file', () => {
    const file = loadKeysFile(join(__dirname, '..', '..', 'config', 'keys.example.yaml'), {
      BATCH_JOBS_GATEWAY_KEY: 'example',
    });
    expect(file.keys.map((k) => k.name)).toEqual(['search-team', 'batch-jobs']);
    expect(file.keys[0].hash).toBe(sha256Hex('replace-me-example-key'));
  });
});
