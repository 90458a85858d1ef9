import { GatewayExpressAdapter } from '../../src/common/http/express-adapter';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Test } from '@nestjs/testing';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { AppModule } from '../../src/app.module';
import { configureApp } from '../../src/bootstrap';
import { PinoNestLogger } from '../../src/common/logging/pino-logger';

export const TEST_KEY = 'test-gateway-key-0123456789';

export interface TestGateway {
  app: NestExpressApplication;
  /** http://127.0.0.1:<port> (Anthropic SDK baseURL) */
  origin: string;
  /** origin + /v1 (OpenAI SDK baseURL) */
  baseURL: string;
  /** Every log line written, parsed. */
  logs: Record<string, unknown>[];
  rawLogs: string[];
  close(): Promise<void>;
}

/** Writes a catalog YAML to a temp file and returns its path. */
export function writeCatalog(yaml: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-catalog-'));
  const path = join(dir, 'catalog.yaml');
  writeFileSync(path, yaml);
  return path;
}

/**
 * A keys file making `key` (TEST_KEY by default) an admin key: one that reaches stored
 * objects the gateway has no owner record of.
 */
export function adminKeysFile(key = TEST_KEY, name = 'admin'): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-keys-'));
  const path = join(dir, 'keys.yaml');
  writeFileSync(
    path,
    `keys:\n  - name: ${name}\n    sha256: ${createHash('sha256').update(key).digest('hex')}\n    admin: true\n`,
  );
  return path;
}

/** A catalog with a fake OpenAI upstream, a key-less provider and the local models. */
export function testCatalog(upstreamUrl: string): string {
  return writeCatalog(`
providers:
  - name: fake-openai
    kind: openai
    base_url: ${upstreamUrl}/v1
    api_key_env: TEST_UPSTREAM_KEY
  - name: fake-vllm
    kind: openai-compatible
    base_url: ${upstreamUrl}/vllm/v1
  - name: keyless
    kind: openai
    base_url: ${upstreamUrl}/v1
    api_key_env: TEST_UNSET_KEY_VARIABLE
  - name: local
    kind: local
models:
  - { id: test-gpt, upstream_id: upstream-gpt-1, provider: fake-openai, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 1, output: 2 } }
  - { id: test-vllm, provider: fake-vllm, family: llama, context_window: 8192, max_output_tokens: 2048, pricing: { input: 0, output: 0 } }
  - { id: messages-only, provider: fake-openai, family: openai, context_window: 8192, max_output_tokens: 1024, pricing: { input: 1, output: 1 }, endpoints: [messages] }
  - { id: no-key-model, provider: keyless, family: openai, context_window: 8192, max_output_tokens: 1024, pricing: { input: 1, output: 1 } }
  - { id: local-echo-gpt, provider: local, family: openai, context_window: 128000, max_output_tokens: 16384, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
  - { id: local-echo-claude, provider: local, family: anthropic, context_window: 200000, max_output_tokens: 32000, pricing: { input: 0, output: 0 }, capabilities: { reasoning: true, tools: true } }
`);
}

/**
 * Boots the real AppModule on a random loopback port with the given environment
 * (applied while the app is created, then restored), exactly as main.ts wires it.
 */
export async function startGateway(env: Record<string, string>): Promise<TestGateway> {
  const saved = new Map<string, string | undefined>();
  const full: Record<string, string> = {
    GATEWAY_API_KEYS: TEST_KEY,
    TEST_UPSTREAM_KEY: 'sk-upstream-secret',
    LOCAL_MODEL_TOKEN_DELAY_MS: '0',
    NODE_ENV: 'test',
    SHUTDOWN_TIMEOUT_MS: '200',
    // No key store unless a suite asks for one: PGlite takes seconds to boot.
    KEY_STORE: 'off',
    // One attempt per request unless a suite tests retries: the other suites count upstream
    // calls and time single failures.
    UPSTREAM_RETRY_ATTEMPTS: '1',
    ...env,
  };
  for (const [k, v] of Object.entries(full)) {
    saved.set(k, process.env[k]);
    process.env[k] = v;
  }
  const rawLogs: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      const line = chunk.toString('utf8');
      rawLogs.push(line);
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // keep raw only
      }
      cb();
    },
  });
  const logger = pino({ level: env.LOG_LEVEL ?? 'info' }, sink);
  try {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    const app = moduleRef.createNestApplication<NestExpressApplication>(
      new GatewayExpressAdapter(),
      {
        bodyParser: false,
        logger: new PinoNestLogger(logger),
      },
    );
    configureApp(app, logger);
    await app.listen(0, '127.0.0.1');
    const port = (app.getHttpServer().address() as AddressInfo).port;
    const origin = `http://127.0.0.1:${port}`;
    return { app, origin, baseURL: `${origin}/v1`, logs, rawLogs, close: () => app.close() };
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) {
        delete process.env[k];
      } else {
        process.env[k] = v;
      }
    }
  }
}
