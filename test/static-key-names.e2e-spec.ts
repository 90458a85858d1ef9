import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { TEST_KEY, type TestGateway } from './support/gateway';
import { admin, eventually, gatewayOnStore } from './support/key-store';
import { describeOnEachStore } from './support/postgres';
import { sha256Hex } from '../src/keys/key-secret';

const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };
const SECOND_KEY = 'second-static-key-0123456789';
const FILE_KEY = 'file-named-key-0123456789';
const VARIABLE_KEY = 'file-variable-key-0123456789';
const BARE_KEY = 'file-bare-key-0123456789';

function keysFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-key-names-'));
  const path = join(dir, 'keys.yaml');
  writeFileSync(
    path,
    [
      'keys:',
      `  - { name: search-team, sha256: ${sha256Hex(FILE_KEY)} }`,
      '  - { key_env: BATCH_JOBS_KEY }',
      `  - { sha256: ${sha256Hex(BARE_KEY)} }`,
    ].join('\n'),
  );
  return path;
}

/** Each key's name in the admin listing, and in usage through the key ids it reports. */
async function namesInUsage(gw: TestGateway, keys: string[]): Promise<string[]> {
  const listed = await admin(gw, 'GET', '/keys');
  expect(listed.status).toBe(200);
  const names = new Map<string, string | null>(
    (listed.body.data as { id: string; name: string | null }[]).map((k) => [k.id, k.name]),
  );
  for (const key of keys) {
    await new OpenAI({
      baseURL: `${gw.origin}/v1`,
      apiKey: key,
      maxRetries: 0,
    }).chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Hi' }],
    });
  }
  const { value } = await eventually(
    async () => {
      const usage = await admin(gw, 'GET', '/usage?group_by=key');
      const rows = usage.body.data as { key_id: string }[];
      return rows.length >= keys.length ? rows : undefined;
    },
    10_000,
    'the ledger rows of every key',
  );
  // The console names usage rows from the listing; every key id must find a name there.
  return value.map((r) => names.get(r.key_id) ?? `unlisted ${r.key_id}`).sort();
}

describeOnEachStore(
  'static and development keys carry their configured names',
  'keynames',
  (backend) => {
    const suite = gatewayOnStore(backend, {
      GATEWAY_API_KEYS: `${TEST_KEY},${SECOND_KEY}`,
      GATEWAY_KEYS_FILE: keysFile(),
      BATCH_JOBS_KEY: VARIABLE_KEY, // set while the gateway boots, as the file's key_env
    });

    it('lists static keys by name, never "(unnamed)", and names their usage the same', async () => {
      const listed = await admin(suite.gw, 'GET', '/keys');
      const statics = (listed.body.data as { type: string; name: unknown }[])
        .filter((k) => k.type === 'static')
        .map((k) => k.name)
        .sort();
      expect(statics).toEqual([
        'BATCH_JOBS_KEY',
        'GATEWAY_API_KEYS #1',
        'GATEWAY_API_KEYS #2',
        'GATEWAY_KEYS_FILE keys[2]',
        'search-team',
      ]);
      expect(
        await namesInUsage(suite.gw, [TEST_KEY, SECOND_KEY, FILE_KEY, VARIABLE_KEY, BARE_KEY]),
      ).toEqual(statics);
    }, 30_000);
  },
);

describeOnEachStore('the development key carries its name', 'devkeyname', (backend) => {
  const suite = gatewayOnStore(backend, {
    GATEWAY_API_KEYS: '',
    GATEWAY_DEV_API_KEY: 'gw-dev-fixed-key-0123456789',
  });

  it('names the development key in the listing and in usage', async () => {
    expect(await namesInUsage(suite.gw, ['gw-dev-fixed-key-0123456789'])).toEqual([
      'GATEWAY_DEV_API_KEY',
    ]);
  }, 30_000);
});
