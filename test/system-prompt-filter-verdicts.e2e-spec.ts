import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { textStream } from './support/chat-fixtures';
import { startGateway, TEST_KEY, type TestGateway } from './support/gateway';
import { checkResponseStream } from './support/responses-fixtures';
import { parseSse } from './support/sse';
import { rejection } from './support/rejection';
import {
  AFTER,
  BEFORE,
  FILTER,
  HEADER,
  LEAK,
  LEAKY_ARGS,
  LEAK_DISGUISED,
  LEAK_MANGLED,
  REDACT,
  SYSTEM,
  WEATHER_RESPONSES,
  anthropic,
  catalog,
  chatAnswers,
  chatTool,
  chatTurn,
  every,
  messagesAnswers,
  messagesTool,
  openai,
  rawPost,
  responsesAnswers,
  responsesTool,
  upstream,
  useFilterGateway,
  withoutEcho,
} from './support/system-prompt-filter-kit';

/** How a stream reports the filter's verdict, and the filter forced on for all traffic. */
useFilterGateway();

describe('verdicts of streams: pending header, trailer, SSE comment', () => {
  it('chat: pending in the header, blocked in the trailer and a comment before [DONE]', async () => {
    chatAnswers([BEFORE, ...every(5, LEAK), AFTER]);
    const res = await rawPost('/v1/chat/completions', {
      model: 'gpt-same',
      stream: true,
      messages: chatTurn(SYSTEM),
      tools: [chatTool()],
    });
    expect(res.status).toBe(200);
    expect(res.headers[HEADER]).toBe(`${FILTER}=pending`);
    expect(res.trailers[HEADER]).toBe(`${FILTER}=blocked;leaks=1`);
    const comment = `: ${HEADER}: ${FILTER}=blocked;leaks=1\n`;
    expect(res.text).toContain(comment);
    expect(res.text.indexOf(comment)).toBeLessThan(res.text.indexOf('data: [DONE]'));
    expect(res.text).not.toMatch(/orion|acme|rockets/i);
    expect(res.text).toContain('"finish_reason":"content_filter"');
  });

  it('responses: a well-formed stream ending in response.incomplete, verdict as trailer', async () => {
    responsesAnswers([
      { kind: 'reasoning', summaries: ['Thinking it over.'] },
      { kind: 'message', pieces: every(3, BEFORE + LEAK + AFTER) },
    ]);
    const res = await rawPost('/v1/responses', {
      model: 'gpt-same',
      stream: true,
      instructions: SYSTEM,
      input: 'Hi',
      tools: [responsesTool()],
    });
    expect(res.headers[HEADER]).toBe(`${FILTER}=pending`);
    expect(res.trailers[HEADER]).toBe(`${FILTER}=blocked;leaks=1`);
    expect(res.text).toContain(`: ${HEADER}: ${FILTER}=blocked;leaks=1\n`);
    const events = parseSse(res.text).map((e) => e.data);
    checkResponseStream(events);
    expect(events.at(-1).type).toBe('response.incomplete');
    expect(events.at(-1).response.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(withoutEcho(events)).not.toMatch(/orion|acme|rockets/i);
  });

  it('messages: redacted in the trailer and the comment, nothing of the leak in the bytes', async () => {
    messagesAnswers(every(4, BEFORE + LEAK + AFTER + ' Again: ' + LEAK_MANGLED));
    const res = await rawPost('/v1/messages', {
      model: 'claude-same',
      max_tokens: 200,
      stream: true,
      system: SYSTEM,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [messagesTool(REDACT)],
    });
    expect(res.headers[HEADER]).toBe(`${FILTER}=pending`);
    expect(res.trailers[HEADER]).toBe(`${FILTER}=redacted;leaks=2`);
    expect(res.text).toContain(`: ${HEADER}: ${FILTER}=redacted;leaks=2\n`);
    expect(res.text).not.toMatch(/orion|acme|rockets/i);
    expect(res.text).toContain('"stop_reason":"end_turn"');
  });

  it('responses: redacted deltas, done events and the terminal output agree', async () => {
    responsesAnswers([
      { kind: 'reasoning', summaries: [`Recall: ${LEAK_MANGLED}.`] },
      { kind: 'message', pieces: every(3, BEFORE + LEAK_DISGUISED + AFTER) },
      {
        kind: 'function_call',
        name: 'get_weather',
        callId: 'call_1',
        pieces: every(7, LEAKY_ARGS),
      },
    ]);
    const res = await rawPost('/v1/responses', {
      model: 'gpt-same',
      stream: true,
      instructions: SYSTEM,
      input: 'Hi',
      reasoning: { effort: 'low', summary: 'auto' },
      tools: [WEATHER_RESPONSES, responsesTool(REDACT)],
    });
    expect(res.trailers[HEADER]).toBe(`${FILTER}=redacted;leaks=3`);
    const events = parseSse(res.text).map((e) => e.data);
    checkResponseStream(events);
    expect(withoutEcho(events)).not.toMatch(/orion|acme|rockets/i);
    const joined = (type: string): string =>
      events
        .filter((e) => e.type === type)
        .map((e) => e.delta)
        .join('');
    const done = (type: string): any => events.find((e) => e.type === type);
    const output = events.at(-1).response.output;
    expect(events.at(-1).type).toBe('response.completed');

    const summary = 'Recall: [REDACTED].';
    expect(joined('response.reasoning_summary_text.delta')).toBe(summary);
    expect(done('response.reasoning_summary_text.done').text).toBe(summary);
    expect(output[0].summary).toEqual([{ type: 'summary_text', text: summary }]);

    const text = `${BEFORE}**[REDACTED]${AFTER}`;
    expect(joined('response.output_text.delta')).toBe(text);
    expect(done('response.output_text.done').text).toBe(text);
    expect(output[1].content[0].text).toBe(text);

    const args = joined('response.function_call_arguments.delta');
    expect(JSON.parse(args)).toEqual({ city: 'Paris', note: `${BEFORE}[REDACTED]${AFTER}` });
    expect(done('response.function_call_arguments.done').arguments).toBe(args);
    expect(output[2].arguments).toBe(args);
  });

  it.each(['chat', 'responses', 'messages'])(
    '%s: a stream whose upstream fails before its first event keeps the status and envelope',
    async (format) => {
      const body =
        format === 'messages'
          ? { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }
          : { error: { message: 'slow down', type: 'rate_limit_error', code: null } };
      for (const path of ['/v1/chat/completions', '/v1/responses', '/v1/messages']) {
        upstream.on(path, () => ({ status: 429, json: body }));
      }
      const call =
        format === 'chat'
          ? openai.chat.completions.create({
              model: 'gpt-same',
              stream: true,
              messages: chatTurn(SYSTEM),
              tools: [chatTool()],
            })
          : format === 'responses'
            ? openai.responses.create({
                model: 'gpt-same',
                stream: true,
                instructions: SYSTEM,
                input: 'Hi',
                tools: [responsesTool()],
              })
            : anthropic.messages.create({
                model: 'claude-same',
                max_tokens: 100,
                stream: true,
                system: SYSTEM,
                messages: [{ role: 'user', content: 'Hi' }],
                tools: [messagesTool()],
              });
      const err = await rejection(call);
      expect(err.status).toBe(429);
      expect(err.headers.get(HEADER)).toBe(`${FILTER}=error`);
      expect(err.headers.get('trailer')).toBeNull();
    },
  );

  it('reports the leak it caught when the upstream fails mid-stream after it', async () => {
    upstream.on('/v1/chat/completions', () => ({
      sse: textStream('gpt-same', [BEFORE, LEAK, AFTER], false),
      after: 'destroy',
    }));
    const res = await rawPost('/v1/chat/completions', {
      model: 'gpt-same',
      stream: true,
      messages: chatTurn(SYSTEM),
      tools: [chatTool(REDACT)],
    });
    expect(res.text).toContain('[REDACTED]');
    expect(res.text).toContain('"error"');
    expect(res.text).not.toMatch(/orion/i);
    expect(res.trailers[HEADER]).toBe(`${FILTER}=redacted;leaks=1`);
  });

  it('a passed stream ends with pass in the trailer', async () => {
    messagesAnswers(['Hello', ' there']);
    const res = await rawPost('/v1/messages', {
      model: 'claude-same',
      max_tokens: 200,
      stream: true,
      system: SYSTEM,
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [messagesTool()],
    });
    expect(res.trailers[HEADER]).toBe(`${FILTER}=pass`);
    expect(res.text).toContain(`: ${HEADER}: ${FILTER}=pass\n`);
  });

  it('reports both protections when prompt_injection_protection is on too', async () => {
    chatAnswers(['Paris']);
    const res = await rawPost('/v1/chat/completions', {
      model: 'gpt-same',
      stream: true,
      messages: chatTurn(SYSTEM, 'What is the capital of France?'),
      tools: [chatTool(), { type: 'function', function: { name: 'prompt_injection_protection' } }],
    });
    expect(res.headers[HEADER]).toMatch(
      /^prompt_injection_protection=pass;score=0\.\d\d, system_prompt_filter=pending$/,
    );
    expect(res.trailers[HEADER]).toMatch(
      /^prompt_injection_protection=pass;score=0\.\d\d, system_prompt_filter=pass$/,
    );
  });
});

describe('PROTECTIONS_FORCE=system_prompt_filter', () => {
  let forced: TestGateway;
  let client: OpenAI;
  beforeAll(async () => {
    forced = await startGateway({
      CATALOG_PATH: catalog(upstream.url),
      PROTECTIONS_FORCE: FILTER,
      SYSTEM_PROMPT_FILTER_MIN_OVERLAP: '4',
    });
    client = new OpenAI({ baseURL: forced.baseURL, apiKey: TEST_KEY, maxRetries: 0 });
  });
  afterAll(() => forced?.close());

  it('protects a request without the tool, with the operator minimum overlap', async () => {
    // Six words of the system prompt in a row: a leak at 4, not at the default 8.
    chatAnswers(['Sure: the launch window or the vault is closed.']);
    const { data, response } = await client.chat.completions
      .create({ model: 'gpt-same', messages: chatTurn(SYSTEM) })
      .withResponse();
    expect(data.choices[0].finish_reason).toBe('content_filter');
    expect(data.choices[0].message.content).toBe('Sure: ');
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=blocked;leaks=1`);
    // The main gateway (min_overlap 8) lets the same six words through.
    const relaxed = await openai.chat.completions.create({
      model: 'gpt-same',
      messages: chatTurn(SYSTEM),
      tools: [chatTool()],
    });
    expect(relaxed.choices[0].finish_reason).toBe('stop');
  });

  it('takes the settings of a tool the request sends', async () => {
    chatAnswers([BEFORE + LEAK + AFTER]);
    const stream = await client.chat.completions
      .stream({ model: 'gpt-same', messages: chatTurn(SYSTEM), tools: [chatTool(REDACT)] })
      .finalChatCompletion();
    expect(stream.choices[0].message.content).toBe(`${BEFORE}[REDACTED].${AFTER}`);
  });

  it('serves anthropic streams without the tool through the canonical path', async () => {
    messagesAnswers(every(2, BEFORE + LEAK));
    const a = new Anthropic({ baseURL: forced.origin, apiKey: TEST_KEY, maxRetries: 0 });
    const final = await a.messages
      .stream({
        model: 'claude-same',
        max_tokens: 100,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('refusal');
    expect(final.content).toMatchObject([{ type: 'text', text: BEFORE }]);
  });
});
