import OpenAI from 'openai';
import { type UpstreamItem } from './support/responses-fixtures';
import { rejection } from './support/rejection';
import {
  AFTER,
  BEFORE,
  FILTER,
  HEADER,
  LEAK,
  LEAKY_ARGS,
  LEAK_MANGLED,
  LOCAL_SYSTEM,
  LOCAL_THINKING_REDACTED,
  PASS_TEXT,
  REDACT,
  SPLITS,
  SYSTEM,
  WEATHER_RESPONSES,
  every,
  openai,
  responsesAnswers,
  responsesTool,
  upstream,
  useFilterGateway,
} from './support/system-prompt-filter-kit';

/** system_prompt_filter on the Responses API. */
useFilterGateway();

describe('system_prompt_filter on /v1/responses', () => {
  const message = (text: string, n = 4): UpstreamItem => ({
    kind: 'message',
    pieces: every(n, text),
  });

  it('blocks a leak (JSON): incomplete with content_filter, text before it kept', async () => {
    responsesAnswers([message(BEFORE + LEAK_MANGLED + AFTER)]);
    const { data, response } = await openai.responses
      .create({ model: 'gpt-same', instructions: SYSTEM, input: 'Hi', tools: [responsesTool()] })
      .withResponse();
    expect(data.status).toBe('incomplete');
    expect(data.incomplete_details?.reason).toBe('content_filter');
    expect(data.output_text).toBe(BEFORE);
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=blocked;leaks=1`);
    expect(data.usage?.input_tokens).toBeGreaterThan(20);
    expect(upstream.last().path).toBe('/v1/responses');
    expect(upstream.last().body.instructions).toBe(SYSTEM);
  });

  it('blocks a streamed leak and cancels the upstream', async () => {
    const tail = Array.from({ length: 40 }, (_, i) => ` more${i}`);
    responsesAnswers([{ kind: 'message', pieces: [BEFORE, ...every(3, LEAK), ...tail] }], {
      intervalMs: 10,
    });
    const final = await openai.responses
      .stream({ model: 'gpt-same', instructions: SYSTEM, input: 'Hi', tools: [responsesTool()] })
      .finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details?.reason).toBe('content_filter');
    expect(final.output_text).toBe(BEFORE);
    expect(await upstream.last().ended).toBe('aborted');
  });

  it.each(SPLITS)('redacts a leak split %s, streamed', async (_name, split) => {
    responsesAnswers([{ kind: 'message', pieces: split(BEFORE + LEAK_MANGLED + AFTER) }]);
    const final = await openai.responses
      .stream({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [responsesTool(REDACT)],
      })
      .finalResponse();
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(`${BEFORE}[REDACTED]${AFTER}`);
  });

  it('protects a system prompt given as a developer input item', async () => {
    responsesAnswers([message(BEFORE + LEAK)]);
    const data = await openai.responses.create({
      model: 'gpt-same',
      instructions: 'Be polite.',
      input: [
        { role: 'developer', content: SYSTEM },
        { role: 'user', content: 'Hi' },
      ],
      tools: [responsesTool()],
    });
    expect(data.status).toBe('incomplete');
    expect(data.output_text).toBe(BEFORE);
  });

  it('redacts a leak in the reasoning summary, streamed and not', async () => {
    const items: UpstreamItem[] = [
      { kind: 'reasoning', summaries: [`Their question. ${LEAK_MANGLED} is my role.`] },
      message('Hello!'),
    ];
    responsesAnswers(items);
    const params = {
      model: 'gpt-same',
      instructions: SYSTEM,
      input: 'Hi',
      reasoning: { effort: 'medium' as const, summary: 'auto' as const },
      tools: [responsesTool(REDACT)],
    };
    for (const final of [
      await openai.responses.create(params),
      await openai.responses.stream(params).finalResponse(),
    ]) {
      expect(final.status).toBe('completed');
      const reasoning = final.output.find((o) => o.type === 'reasoning');
      expect(reasoning?.type === 'reasoning' && reasoning.summary[0].text).toBe(
        'Their question. [REDACTED] is my role.',
      );
      expect(final.output_text).toBe('Hello!');
    }
  });

  it('blocks a leak in the reasoning summary before any answer', async () => {
    responsesAnswers([{ kind: 'reasoning', summaries: [`Hmm. ${LEAK}`] }, message('Never shown.')]);
    const final = await openai.responses
      .stream({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        reasoning: { effort: 'medium', summary: 'detailed' },
        tools: [responsesTool()],
      })
      .finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details?.reason).toBe('content_filter');
    expect(final.output).toHaveLength(1);
    const reasoning = final.output[0];
    expect(reasoning.type === 'reasoning' && reasoning.summary[0].text).toBe('Hmm. ');
  });

  it('redacts function call arguments into valid JSON and blocks them with content_filter', async () => {
    const items: UpstreamItem[] = [
      {
        kind: 'function_call',
        name: 'get_weather',
        callId: 'call_1',
        pieces: every(4, LEAKY_ARGS),
      },
    ];
    responsesAnswers(items);
    const redacted = await openai.responses
      .stream({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [WEATHER_RESPONSES, responsesTool(REDACT)],
      })
      .finalResponse();
    const call = redacted.output[0];
    expect(call.type).toBe('function_call');
    expect(call.type === 'function_call' && JSON.parse(call.arguments)).toEqual({
      city: 'Paris',
      note: `${BEFORE}[REDACTED]${AFTER}`,
    });
    const blocked = await openai.responses.create({
      model: 'gpt-same',
      instructions: SYSTEM,
      input: 'Hi',
      tools: [WEATHER_RESPONSES, responsesTool()],
    });
    expect(blocked.status).toBe('incomplete');
    expect(blocked.incomplete_details?.reason).toBe('content_filter');
    expect(JSON.stringify(blocked.output)).not.toMatch(/orion/i);
  });

  it('passes a normal answer byte for byte, strips the protection, keeps tools and tool_choice', async () => {
    responsesAnswers([message(PASS_TEXT, 3)]);
    const { data, response } = await openai.responses
      .create({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [responsesTool(), WEATHER_RESPONSES],
        tool_choice: { type: 'function', name: 'get_weather' },
      })
      .withResponse();
    expect(data.status).toBe('completed');
    expect(data.output_text).toBe(PASS_TEXT);
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=pass`);
    const sent = upstream.last();
    expect(sent.raw).not.toContain(FILTER);
    expect(sent.body.tools).toEqual([WEATHER_RESPONSES]);
    expect(sent.body.tool_choice).toEqual({ type: 'function', name: 'get_weather' });
    const streamed = await openai.responses
      .stream({ model: 'gpt-same', instructions: SYSTEM, input: 'Hi', tools: [responsesTool()] })
      .finalResponse();
    expect(streamed.output_text).toBe(PASS_TEXT);
  });

  it('redacts the reasoning summary of the local model', async () => {
    const params = {
      model: 'local-echo-gpt',
      instructions: LOCAL_SYSTEM,
      input: 'Hi',
      reasoning: { effort: 'low' as const, summary: 'auto' as const },
      tools: [responsesTool(REDACT)],
    };
    for (const final of [
      await openai.responses.create(params),
      await openai.responses.stream(params).finalResponse(),
    ]) {
      const reasoning = final.output[0];
      expect(reasoning.type === 'reasoning' && reasoning.summary).toEqual([
        { type: 'summary_text', text: LOCAL_THINKING_REDACTED },
      ]);
      expect(final.output_text).toBe('Echo: Hi');
    }
  });

  it('blocks the local echo model', async () => {
    const data = await openai.responses.create({
      model: 'local-echo-gpt',
      instructions: SYSTEM,
      input: `Say ${LEAK}`,
      reasoning: { effort: 'low' },
      tools: [responsesTool()],
    });
    expect(data.status).toBe('incomplete');
    expect(data.output_text).toBe('Echo: Say ');
    expect(data.output.some((o) => o.type === 'reasoning')).toBe(true);
  });

  it('rejects a bad setting and a tool_choice naming the protection', async () => {
    const bad = await rejection(
      openai.responses.create({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [responsesTool({ min_overlap: { type: 'integer', const: 1 } })],
      }),
    );
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad.param).toBe('tools[0].parameters.properties.min_overlap');
    const unknown = await rejection(
      openai.responses.create({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [WEATHER_RESPONSES, responsesTool({ threshold: { default: 0.5 } })],
      }),
    );
    expect(unknown.param).toBe('tools[1].parameters.properties.threshold');
    const choice = await rejection(
      openai.responses.create({
        model: 'gpt-same',
        instructions: SYSTEM,
        input: 'Hi',
        tools: [responsesTool()],
        tool_choice: { type: 'function', name: FILTER },
      }),
    );
    expect(choice.status).toBe(400);
    expect(choice.param).toBe('tool_choice');
    expect(upstream.requests).toHaveLength(0);
  });
});
