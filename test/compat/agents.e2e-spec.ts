import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { TEST_KEY } from '../support/gateway';
import { type CompatRig, MODELS, startCompatRig } from './compat-upstream';

/**
 * Coding agents driven as their users run them, each pointed at the gateway by base URL and
 * key only: Claude Code in print mode (`claude -p`, ANTHROPIC_BASE_URL) and Codex CLI
 * (`codex exec` with a custom `wire_api = "responses"` provider in a temporary CODEX_HOME).
 * Both CLIs are the pinned dev dependencies, whose npm packages carry the native binaries:
 * nothing is downloaded at run time, and the environment below turns off their updaters,
 * telemetry and other traffic (the fake providers and the local models are all they reach).
 * Each session asks for a tool, so the agent runs the tool and sends its result back.
 */

jest.setTimeout(120_000);

let rig: CompatRig;

beforeAll(async () => {
  rig = await startCompatRig();
});
afterAll(() => rig.close());

/** Runs a CLI to its end; resolves with its output whatever its exit code. */
function run(
  file: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      { env, cwd, timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/** The environment of an agent: only what it needs, and nothing that lets it phone home. */
function baseEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: tmpdir(),
    NO_COLOR: '1',
    CI: '1',
  };
}

/** A scratch project directory with one file for the agents to find. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-agent-project-'));
  writeFileSync(join(dir, 'notes.txt'), 'gateway notes\n');
  return dir;
}

/** The generation requests that reached the fake providers since `from`. */
function upstreamSince(from: number): { path: string; body: Record<string, any> }[] {
  return rig.upstream.requests
    .slice(from)
    .filter((r) => /\/(chat\/completions|responses|messages)$/.test(r.path))
    .map((r) => ({ path: r.path, body: r.body as Record<string, any> }));
}

/**
 * Claude Code's native binary, from its platform package (the wrapper's postinstall only
 * links the same file over its placeholder, and npm may leave install scripts unrun).
 */
const claudeBinary = join(
  dirname(
    require.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`),
  ),
  'claude',
);

describe('Claude Code (claude -p) through /v1/messages', () => {
  async function claude(model: string, prompt: string): Promise<Record<string, any>> {
    const home = mkdtempSync(join(tmpdir(), 'gw-claude-home-'));
    const result = await run(
      claudeBinary,
      ['-p', prompt, '--output-format', 'json', '--model', model, '--allowedTools', 'Glob'],
      {
        ...baseEnv(home),
        CLAUDE_CONFIG_DIR: join(home, '.claude'),
        ANTHROPIC_BASE_URL: rig.gw.origin,
        ANTHROPIC_API_KEY: TEST_KEY,
        ANTHROPIC_MODEL: model,
        ANTHROPIC_SMALL_FAST_MODEL: model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        DISABLE_AUTOUPDATER: '1',
        DISABLE_TELEMETRY: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_BUG_COMMAND: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        CLAUDE_CODE_DISABLE_TERMINAL_TITLE: '1',
      },
      project(),
    );
    if (result.code !== 0) {
      throw new Error(`claude exited ${result.code}: ${result.stderr}\n${result.stdout}`);
    }
    return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as Record<string, any>;
  }

  it.each([
    ['native, a Claude model', MODELS.claude, 32000],
    ['translated to chat completions, a GPT model with a 16k output limit', MODELS.gptChat, 16384],
    ['translated to the Responses API', MODELS.gptResponses, 32000],
  ])('runs a Glob tool round trip (%s)', async (_, model, cap) => {
    const from = rig.upstream.requests.length;
    const out = await claude(model, 'Use the Glob tool to find the notes.');
    expect(out.is_error).toBe(false);
    expect(out.result).toMatch(/^Tool result: /);
    const calls = upstreamSince(from).filter((r) =>
      (r.body.tools ?? []).some((t: any) => (t.name ?? t.function?.name) === 'Glob'),
    );
    // The model asked for the tool, then got its result back.
    expect(calls.length).toBeGreaterThanOrEqual(2);
    const last = JSON.stringify(calls.at(-1)!.body);
    expect(last).toMatch(/tool_result|"role":"tool"|function_call_output/);
    if (model !== MODELS.claude) {
      // Claude Code's 32000-token cap, lowered to the model's limit; its user id hashed.
      const body = calls.at(-1)!.body;
      expect(body.max_completion_tokens ?? body.max_output_tokens).toBe(cap);
      expect(last).not.toContain('session_id');
      expect(body.prompt_cache_key).toMatch(/^gw-[0-9a-f]{32}$/);
    }
  });

  it('answers on a local model', async () => {
    const out = await claude(MODELS.localGpt, 'Say hello.');
    expect(out.is_error).toBe(false);
    expect(out.result).toMatch(/^Echo: [\s\S]*Say hello\./);
  });
});

const codexBinary = join(dirname(require.resolve('@openai/codex/package.json')), 'bin', 'codex.js');

describe('Codex CLI (codex exec) through /v1/responses', () => {
  async function codex(model: string, prompt: string): Promise<string> {
    const home = mkdtempSync(join(tmpdir(), 'gw-codex-home-'));
    writeFileSync(
      join(home, 'config.toml'),
      [
        `model = "${model}"`,
        'model_provider = "gateway"',
        'check_for_update_on_startup = false',
        '[analytics]',
        'enabled = false',
        '[model_providers.gateway]',
        'name = "Gateway"',
        `base_url = "${rig.gw.baseURL}"`,
        'env_key = "GATEWAY_API_KEY"',
        'wire_api = "responses"',
        '',
      ].join('\n'),
    );
    const result = await run(
      process.execPath,
      [
        codexBinary,
        'exec',
        '--skip-git-repo-check',
        '--sandbox',
        'read-only',
        '--color',
        'never',
        prompt,
      ],
      { ...baseEnv(home), CODEX_HOME: home, GATEWAY_API_KEY: TEST_KEY },
      project(),
    );
    if (result.code !== 0) {
      throw new Error(`codex exited ${result.code}: ${result.stderr}\n${result.stdout}`);
    }
    return result.stdout;
  }

  // Codex names its shell tool `exec_command`; the fake calls a tool the prompt names.
  it.each([
    ['a Responses API model', MODELS.gptResponses],
    ['a chat completions model, which OpenAI serves on the Responses API too', MODELS.gptChat],
  ])('runs a shell tool round trip (%s)', async (_, model) => {
    const from = rig.upstream.requests.length;
    const out = await codex(model, 'Use the exec_command tool to list the files.');
    expect(out).toContain('Tool result:');
    const calls = upstreamSince(from);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.path === '/v1/responses')).toBe(true);
    expect(JSON.stringify(calls.at(-1)!.body)).toContain('function_call_output');
  });

  it('runs a shell tool round trip on a chat-only deployment (vLLM), translated from the Responses API', async () => {
    const from = rig.upstream.requests.length;
    const out = await codex(MODELS.vllm, 'Use the exec_command tool to list the files.');
    expect(out).toContain('Tool result:');
    const calls = upstreamSince(from);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls.every((c) => c.path === '/vllm/v1/chat/completions')).toBe(true);
    expect(calls.at(-1)!.body.messages.some((m: { role: string }) => m.role === 'tool')).toBe(true);
    // Codex's grouped agent tools reach the chat API as flat functions; web_search cannot.
    const offered = (calls[0].body.tools as { function: { name: string } }[]).map(
      (t) => t.function.name,
    );
    expect(offered).toEqual(expect.arrayContaining(['exec_command', 'spawn_agent']));
  });

  it('runs a tool round trip on a local model, translated from the Responses API', async () => {
    const out = await codex(MODELS.localGpt, 'Use the exec_command tool to list the files.');
    // The local model calls the tool; its second turn echoes the result Codex sent back.
    expect(out).toContain('Tool exec_command returned:');
  });
});

describe("Claude Code's request shapes, sent by hand", () => {
  async function messages(body: Record<string, unknown>): Promise<Response> {
    return fetch(`${rig.gw.origin}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': TEST_KEY,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(body),
    });
  }

  it.each([MODELS.gptChat, MODELS.localGpt])(
    'serves max_tokens 32000 on %s (16k limit) and names what it changed',
    async (model) => {
      const res = await messages({
        model,
        max_tokens: 32000,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'Hi' }],
      });
      expect(res.status).toBe(200);
      if (model === MODELS.gptChat) {
        expect(res.headers.get('x-gateway-dropped-params')).toBe('cache_control, max_tokens');
      }
      const answer = (await res.json()) as { type: string };
      expect(answer.type).toBe('message');
    },
  );

  it('refuses a __proto__ content block with a 400 naming it', async () => {
    const res = await messages({
      model: MODELS.localGpt,
      max_tokens: 100,
      messages: [{ role: 'user', content: [{ type: '__proto__' }] }],
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain('messages.0.content.0.type');
  });
});
