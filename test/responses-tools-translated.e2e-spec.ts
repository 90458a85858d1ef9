import OpenAI from 'openai';
import { FakeUpstream } from './support/fake-upstream';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { REPLIES, UPSTREAM_PATHS, translationCatalog } from './support/translation-fixtures';

/**
 * The tools Codex and other Responses clients declare beyond flat functions, on a model
 * served by a chat-only deployment (`vllm-t`): the functions of a `namespace` tool are
 * offered flat and come back as function_call items with their namespace; a hosted tool
 * merely offered (Codex's `web_search`) is dropped and named; one the tool choice forces is
 * a 400.
 */

type Json = Record<string, any>;

const SYSTEM = 'You are a terse assistant.';
const PARAMS = { type: 'object', properties: { q: { type: 'string' } } };
const TOOLS = [
  { type: 'function', name: 'lookup', description: 'Top-level lookup.', parameters: PARAMS },
  {
    type: 'namespace',
    name: 'crm',
    description: 'Customer records.',
    tools: [
      { type: 'function', name: 'lookup', description: 'Finds a customer.', parameters: PARAMS },
      { type: 'function', name: 'update', description: 'Updates a customer.', parameters: PARAMS },
    ],
  },
  { type: 'web_search' },
];

let upstream: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  upstream = await new FakeUpstream().start();
  gw = await startGateway({ CATALOG_PATH: translationCatalog(upstream.url) });
  openai = new OpenAI({ baseURL: gw.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await upstream.stop();
});
beforeEach(() => upstream.reset());

/** The chat requests that reached the vLLM fake. */
function upstreamBodies(): Json[] {
  return upstream.requests.filter((r) => r.path === UPSTREAM_PATHS.chat).map((r) => r.body as Json);
}

describe.each([false, true])('namespace tools on a chat-only deployment (stream: %s)', (stream) => {
  it('offers the functions flat (renaming a clash) and answers with the namespace', async () => {
    upstream.on(UPSTREAM_PATHS.chat, () =>
      REPLIES.chat(
        [{ type: 'tool', id: 'call_1', name: 'crm__lookup', args: '{"q":"ada"}' }],
        stream,
      ),
    );
    const request = {
      model: 'vllm-t',
      instructions: SYSTEM,
      input: 'Find Ada.',
      tools: TOOLS,
    } as never;
    let output: Json[];
    let dropped: string | null;
    if (stream) {
      const events: Json[] = [];
      const { data, response } = await openai.responses
        .create({ ...(request as object), stream: true } as never)
        .withResponse();
      dropped = response.headers.get('x-gateway-dropped-params');
      for await (const event of data as unknown as AsyncIterable<Json>) {
        events.push(event);
      }
      output = events.find((e) => e.type === 'response.completed')!.response.output;
      const added = events.find((e) => e.type === 'response.output_item.added')!.item;
      expect(added).toMatchObject({ type: 'function_call', namespace: 'crm', name: 'lookup' });
      const done = events.find((e) => e.type === 'response.function_call_arguments.done')!;
      expect(done.name).toBe('lookup');
    } else {
      const { data, response } = await openai.responses.create(request).withResponse();
      dropped = response.headers.get('x-gateway-dropped-params');
      output = data.output;
    }
    expect(output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_1',
        namespace: 'crm',
        name: 'lookup',
        arguments: '{"q":"ada"}',
      }),
    ]);
    expect(dropped).toBe('tools.web_search');
    const [sent] = upstreamBodies();
    expect(sent.tools.map((t: Json) => t.function.name)).toEqual([
      'lookup',
      'crm__lookup',
      'update',
    ]);
    expect(sent.tools[2].function.description).toBe('Updates a customer.');
  });
});

it('sends a namespaced call of the history back under its flat name', async () => {
  upstream.on(UPSTREAM_PATHS.chat, () =>
    REPLIES.chat([{ type: 'text', text: 'Ada is found.' }], false),
  );
  const answer = await openai.responses.create({
    model: 'vllm-t',
    instructions: SYSTEM,
    tools: TOOLS,
    input: [
      { role: 'user', content: 'Find Ada.' },
      {
        type: 'function_call',
        call_id: 'call_1',
        namespace: 'crm',
        name: 'lookup',
        arguments: '{"q":"ada"}',
      },
      { type: 'function_call_output', call_id: 'call_1', output: 'Ada Lovelace, London' },
    ],
  } as never);
  expect(answer.output_text).toBe('Ada is found.');
  const [sent] = upstreamBodies();
  const assistant = sent.messages.find((m: Json) => m.role === 'assistant');
  expect(assistant.tool_calls[0].function).toEqual({
    name: 'crm__lookup',
    arguments: '{"q":"ada"}',
  });
  expect(sent.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
});

it('refuses a hosted tool that the tool choice forces, naming it', async () => {
  const e = await openai.responses
    .create({
      model: 'vllm-t',
      instructions: SYSTEM,
      input: 'x',
      tools: [{ type: 'web_search' }],
      tool_choice: { type: 'web_search' },
    } as never)
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  expect(e).toBeInstanceOf(OpenAI.BadRequestError);
  expect((e as { param: string }).param).toBe('tools[0]');
  expect(upstreamBodies()).toHaveLength(0);
});

it('drops a namespace member the chat API cannot express and names it', async () => {
  upstream.on(UPSTREAM_PATHS.chat, () => REPLIES.chat([{ type: 'text', text: 'ok' }], false));
  const { response } = await openai.responses
    .create({
      model: 'vllm-t',
      instructions: SYSTEM,
      input: 'x',
      tools: [
        {
          type: 'namespace',
          name: 'ops',
          description: 'Operations.',
          tools: [
            { type: 'function', name: 'restart', parameters: PARAMS },
            { type: 'custom', name: 'patch' },
          ],
        },
      ],
    } as never)
    .withResponse();
  expect(response.headers.get('x-gateway-dropped-params')).toBe('tools[0].tools.custom');
  expect(upstreamBodies()[0].tools.map((t: Json) => t.function.name)).toEqual(['restart']);
});

it('refuses a malformed namespace tool with a 400 naming the field', async () => {
  const e = await openai.responses
    .create({
      model: 'vllm-t',
      instructions: SYSTEM,
      input: 'x',
      tools: [{ type: 'namespace', name: 'ops', description: 'd', tools: 'restart' }],
    } as never)
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  expect(e).toBeInstanceOf(OpenAI.BadRequestError);
  expect((e as { param: string }).param).toBe('tools[0].tools');
});
