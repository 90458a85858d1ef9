import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { BEDROCK_SIGNATURE, BEDROCK_USAGE, FakeBedrock } from './support/fake-bedrock';

/**
 * The fake Bedrock is only worth what it agrees with AWS's own client: the official
 * `@aws-sdk/client-bedrock-runtime` signs requests the fake accepts (and the fake refuses
 * a wrong secret or region), parses its answers, decodes its event streams and reads its
 * errors as the modelled exceptions.
 */

const IDENTITY = {
  accessKeyId: 'AKIAFAKEBEDROCK00001',
  secretAccessKey: 'fake/Secret+Access/Key0123456789abcdefghij',
  sessionToken: 'IQoJb3JpZ2luX2VjEFakeSessionToken0123456789',
};
const MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

let fake: FakeBedrock;

function client(
  overrides: Partial<typeof IDENTITY> = {},
  region = 'us-west-2',
): BedrockRuntimeClient {
  return new BedrockRuntimeClient({
    region,
    endpoint: fake.url,
    credentials: { ...IDENTITY, ...overrides },
    maxAttempts: 1,
    // The client's default handler is HTTP/2 (for bidirectional streams); the fake is HTTP/1.1.
    requestHandler: new NodeHttpHandler(),
  });
}

beforeAll(async () => {
  fake = await new FakeBedrock(IDENTITY, 'us-west-2').start();
});
afterAll(async () => {
  await fake.stop();
});
beforeEach(() => fake.reset());

it('accepts the SDK-signed Converse call and answers in a shape the SDK parses', async () => {
  const out = await client().send(
    new ConverseCommand({
      modelId: MODEL,
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { maxTokens: 100 },
    }),
  );
  expect(out.output?.message?.content).toEqual([{ text: 'Hello from Bedrock.' }]);
  expect(out.stopReason).toBe('end_turn');
  expect(out.usage).toEqual(BEDROCK_USAGE);
  expect(fake.last()).toMatchObject({ modelId: MODEL, stream: false, region: 'us-west-2' });
  // The SDK escapes the model id's colon in the path, as the gateway does.
  expect(fake.last().path).toBe(`/model/${encodeURIComponent(MODEL)}/converse`);
});

it('streams events the SDK decodes: reasoning with its signature, then a tool call', async () => {
  const out = await client().send(
    new ConverseStreamCommand({
      modelId: MODEL,
      messages: [{ role: 'user', content: [{ text: 'Weather in Paris?' }] }],
      inferenceConfig: { maxTokens: 4096 },
      additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 2048 } },
      toolConfig: {
        tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object' } } } }],
      },
    }),
  );
  const events: ConverseStreamOutput[] = [];
  for await (const event of out.stream!) {
    events.push(event);
  }
  const kinds = events.map((e) => Object.keys(e).find((k) => k !== '$unknown'));
  expect(kinds).toEqual([
    'messageStart',
    'contentBlockDelta',
    'contentBlockDelta',
    'contentBlockStop',
    'contentBlockStart',
    'contentBlockDelta',
    'contentBlockDelta',
    'contentBlockStop',
    'messageStop',
    'metadata',
  ]);
  expect(events[2].contentBlockDelta?.delta).toEqual({
    reasoningContent: { signature: BEDROCK_SIGNATURE },
  });
  expect(events[4].contentBlockStart?.start).toEqual({
    toolUse: { toolUseId: 'tooluse_bdrk_1', name: 'get_weather' },
  });
  expect(events[8].messageStop?.stopReason).toBe('tool_use');
  expect(events[9].metadata?.usage).toEqual(BEDROCK_USAGE);
});

it('gives errors the SDK reads as the modelled exceptions, with their status', async () => {
  fake.script.push({ status: 429, type: 'ThrottlingException', message: 'Too many requests.' });
  await expect(
    client().send(
      new ConverseCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        inferenceConfig: { maxTokens: 10 },
      }),
    ),
  ).rejects.toMatchObject({
    name: 'ThrottlingException',
    message: 'Too many requests.',
    $metadata: { httpStatusCode: 429 },
  });
});

it('ends a stream with an in-stream exception the SDK raises', async () => {
  fake.script.push({ exception: 'throttlingException', message: 'Slow down.', before: 2 });
  const out = await client().send(
    new ConverseStreamCommand({
      modelId: MODEL,
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { maxTokens: 10 },
    }),
  );
  const seen: string[] = [];
  await expect(
    (async () => {
      for await (const event of out.stream!) {
        seen.push(Object.keys(event)[0]);
      }
    })(),
  ).rejects.toMatchObject({ name: 'ThrottlingException', message: 'Slow down.' });
  expect(seen).toEqual(['messageStart', 'contentBlockDelta']);
});

it('refuses a wrong secret, a wrong session token and a wrong region, as AWS does', async () => {
  const call = (c: BedrockRuntimeClient): Promise<unknown> =>
    c.send(
      new ConverseCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        inferenceConfig: { maxTokens: 10 },
      }),
    );
  await expect(call(client({ secretAccessKey: 'wrong-secret-key' }))).rejects.toMatchObject({
    name: 'InvalidSignatureException',
    $metadata: { httpStatusCode: 403 },
  });
  await expect(call(client({ sessionToken: 'another-token' }))).rejects.toMatchObject({
    $metadata: { httpStatusCode: 403 },
  });
  await expect(call(client({}, 'eu-central-1'))).rejects.toMatchObject({
    $metadata: { httpStatusCode: 403 },
  });
  expect(fake.calls).toHaveLength(0);
});
