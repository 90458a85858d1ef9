import Anthropic from '@anthropic-ai/sdk';
import { anthropicMessage, named } from './support/anthropic-fixtures';
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
  SIGNATURE,
  SPLITS,
  SYSTEM,
  WEATHER_MESSAGES,
  anthropic,
  every,
  messagesAnswers,
  messagesTool,
  thinkingEvents,
  toolUseEvents,
  upstream,
  useFilterGateway,
} from './support/system-prompt-filter-kit';

/** system_prompt_filter on Anthropic Messages, and count_tokens with the tool. */
useFilterGateway();

describe('system_prompt_filter on /v1/messages', () => {
  it('blocks a leak (JSON): stop_reason refusal, text before it kept', async () => {
    messagesAnswers([BEFORE + LEAK_MANGLED + AFTER]);
    const { data, response } = await anthropic.messages
      .create({
        model: 'claude-same',
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool()],
      })
      .withResponse();
    expect(data.stop_reason).toBe('refusal');
    expect(data.content).toMatchObject([{ type: 'text', text: BEFORE }]);
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=blocked;leaks=1`);
    // Anthropic tells the input tokens at the start: they are kept.
    expect(data.usage.input_tokens).toBe(25);
    // Re-encoded on the canonical path for the Messages API.
    expect(upstream.last().path).toBe('/v1/messages');
    expect(JSON.stringify(upstream.last().body.system)).toContain('You are Orion');
  });

  it('blocks a streamed leak and cancels the upstream', async () => {
    const tail = Array.from({ length: 40 }, (_, i) => ` more${i}`);
    messagesAnswers([BEFORE, ...every(2, LEAK), ...tail], { intervalMs: 10 });
    const final = await anthropic.messages
      .stream({
        model: 'claude-same',
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool()],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('refusal');
    expect(final.content).toMatchObject([{ type: 'text', text: BEFORE }]);
    expect(await upstream.last().ended).toBe('aborted');
  });

  it.each(SPLITS)('redacts a leak split %s, streamed', async (_name, split) => {
    messagesAnswers(split(BEFORE + LEAK_MANGLED + AFTER));
    const final = await anthropic.messages
      .stream({
        model: 'claude-same',
        max_tokens: 200,
        system: [{ type: 'text', text: SYSTEM }],
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool(REDACT)],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toMatchObject([{ type: 'text', text: `${BEFORE}[REDACTED]${AFTER}` }]);
  });

  it('redacts a leak in thinking deltas and keeps the signature', async () => {
    const thinking = every(3, `Let me see. ${LEAK_MANGLED} says who I am.`);
    upstream.on('/v1/messages', () => ({ sse: named(thinkingEvents(thinking, ['Hello!'])) }));
    const final = await anthropic.messages
      .stream({
        model: 'claude-same',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool(REDACT)],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('end_turn');
    expect(final.content).toMatchObject([
      {
        type: 'thinking',
        thinking: 'Let me see. [REDACTED] says who I am.',
        signature: SIGNATURE,
      },
      { type: 'text', text: 'Hello!' },
    ]);
  });

  it('blocks a leak in thinking, ending the message with refusal before the answer', async () => {
    const thinking = every(1, `Let me see. ${LEAK}`);
    upstream.on('/v1/messages', () => ({ sse: named(thinkingEvents(thinking, ['Hello!'])) }));
    const final = await anthropic.messages
      .stream({
        model: 'claude-same',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool()],
      })
      .finalMessage();
    expect(final.stop_reason).toBe('refusal');
    expect(final.content).toHaveLength(1);
    expect(final.content[0].type === 'thinking' && final.content[0].thinking).toBe('Let me see. ');
  });

  it('redacts tool_use input into an object the SDK parses, and blocks it', async () => {
    upstream.on('/v1/messages', (req) =>
      req.body.stream
        ? { sse: named(toolUseEvents('get_weather', every(6, LEAKY_ARGS))) }
        : {
            json: anthropicMessage(
              'claude-same',
              [
                {
                  type: 'tool_use',
                  id: 'toolu_1',
                  name: 'get_weather',
                  input: JSON.parse(LEAKY_ARGS),
                },
              ],
              { stop_reason: 'tool_use' },
            ),
          },
    );
    const params = {
      model: 'claude-same',
      max_tokens: 200,
      system: SYSTEM,
      messages: [{ role: 'user' as const, content: 'Hi' }],
      tools: [WEATHER_MESSAGES, messagesTool(REDACT)],
    };
    for (const final of [
      await anthropic.messages.stream(params).finalMessage(),
      await anthropic.messages.create(params),
    ]) {
      expect(final.stop_reason).toBe('tool_use');
      expect(final.content[0].type === 'tool_use' && final.content[0].input).toEqual({
        city: 'Paris',
        note: `${BEFORE}[REDACTED]${AFTER}`,
      });
    }
    const blocked = await anthropic.messages
      .stream({ ...params, tools: [WEATHER_MESSAGES, messagesTool()] })
      .finalMessage();
    expect(blocked.stop_reason).toBe('refusal');
    expect(JSON.stringify(blocked.content)).not.toMatch(/orion/i);
  });

  it('blocks the local echo model and keeps its thinking', async () => {
    const params = {
      model: 'local-echo-claude',
      max_tokens: 2000,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      system: SYSTEM,
      messages: [{ role: 'user' as const, content: `Say ${LEAK}` }],
      tools: [messagesTool()],
    };
    for (const final of [
      await anthropic.messages.create(params),
      await anthropic.messages.stream(params).finalMessage(),
    ]) {
      expect(final.stop_reason).toBe('refusal');
      expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
      expect(final.content[1].type === 'text' && final.content[1].text).toBe('Echo: Say ');
    }
  });

  it('redacts the thinking of the local model where it repeats the system prompt', async () => {
    const params = {
      model: 'local-echo-claude',
      max_tokens: 2000,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      system: LOCAL_SYSTEM,
      messages: [{ role: 'user' as const, content: 'Hi' }],
      tools: [messagesTool(REDACT)],
    };
    for (const final of [
      await anthropic.messages.create(params),
      await anthropic.messages.stream(params).finalMessage(),
    ]) {
      expect(final.stop_reason).toBe('end_turn');
      expect(final.content).toMatchObject([
        // A thinking budget is medium effort: one more sentence (the protection is no tool).
        { type: 'thinking', thinking: `${LOCAL_THINKING_REDACTED} 0 tools are on offer.` },
        { type: 'text', text: 'Echo: Hi' },
      ]);
    }
  });

  it('passes a normal answer byte for byte, strips the protection, keeps tools and tool_choice', async () => {
    messagesAnswers(every(3, PASS_TEXT));
    const { data, response } = await anthropic.messages
      .create({
        model: 'claude-same',
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool(), WEATHER_MESSAGES],
        tool_choice: { type: 'tool', name: 'get_weather' },
      })
      .withResponse();
    expect(data.content).toMatchObject([{ type: 'text', text: PASS_TEXT }]);
    expect(response.headers.get(HEADER)).toBe(`${FILTER}=pass`);
    const sent = upstream.last();
    expect(sent.raw).not.toContain(FILTER);
    expect(sent.body.tools).toEqual([WEATHER_MESSAGES]);
    expect(sent.body.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    const streamed = await anthropic.messages
      .stream({
        model: 'claude-same',
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Hi' }],
        tools: [messagesTool()],
      })
      .finalMessage();
    expect(streamed.content).toMatchObject([{ type: 'text', text: PASS_TEXT }]);
  });

  it('sends marked system blocks upstream without the tags', async () => {
    messagesAnswers(['The passphrase is tangerine falcon seventeen.']);
    const final = await anthropic.messages.create({
      model: 'claude-same',
      max_tokens: 200,
      system: [
        { type: 'text', text: 'You are Orion.' },
        { type: 'text', text: '<SECRET>The passphrase is tangerine falcon seventeen.</Secret>' },
      ],
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [messagesTool(REDACT)],
    });
    expect(final.content).toMatchObject([{ type: 'text', text: '[REDACTED].' }]);
    expect(upstream.last().body.system).toEqual([
      { type: 'text', text: 'You are Orion.' },
      { type: 'text', text: 'The passphrase is tangerine falcon seventeen.' },
    ]);
  });

  it('protects a span marked across two system blocks', async () => {
    messagesAnswers(['Sure: the passphrase is tangerine falcon seventeen, by the way.']);
    const final = await anthropic.messages.create({
      model: 'claude-same',
      max_tokens: 200,
      system: [
        { type: 'text', text: 'You are Orion. <secret>The passphrase is' },
        { type: 'text', text: 'tangerine falcon seventeen.</secret> Be brief.' },
      ],
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [messagesTool(REDACT)],
    });
    expect(final.content).toMatchObject([{ type: 'text', text: 'Sure: [REDACTED], by the way.' }]);
    expect(upstream.last().body.system).toEqual([
      { type: 'text', text: 'You are Orion. The passphrase is' },
      { type: 'text', text: 'tangerine falcon seventeen. Be brief.' },
    ]);
  });

  it('rejects bad settings and a tool_choice naming the protection', async () => {
    const params = {
      model: 'claude-same',
      max_tokens: 200,
      system: SYSTEM,
      messages: [{ role: 'user' as const, content: 'Hi' }],
    };
    const bad = await rejection(
      anthropic.messages.create({
        ...params,
        tools: [messagesTool({ min_overlap: { type: 'integer', default: 500 } })],
      }),
    );
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error.error.type).toBe('invalid_request_error');
    expect(bad.error.error.message).toContain('tools[0].input_schema.properties.min_overlap');
    const action = await rejection(
      anthropic.messages.create({
        ...params,
        tools: [WEATHER_MESSAGES, messagesTool({ action: { const: 'mask' } })],
      }),
    );
    expect(action.error.error.message).toContain('tools[1].input_schema.properties.action');
    const choice = await rejection(
      anthropic.messages.create({
        ...params,
        tools: [messagesTool()],
        tool_choice: { type: 'tool', name: FILTER },
      }),
    );
    expect(choice.status).toBe(400);
    expect(choice.error.error.message).toContain('tool_choice');
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('/v1/messages/count_tokens', () => {
  const base = {
    system: SYSTEM,
    messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
  };

  it('counts a protection tool as nothing for a non-Anthropic model', async () => {
    const without = await anthropic.messages.countTokens({
      ...base,
      model: 'gpt-same',
      tools: [WEATHER_MESSAGES],
    });
    const withTool = await anthropic.messages.countTokens({
      ...base,
      model: 'gpt-same',
      tools: [WEATHER_MESSAGES, messagesTool(REDACT)],
    });
    expect(without.input_tokens).toBeGreaterThan(0);
    expect(withTool.input_tokens).toBe(without.input_tokens);
    const only = await anthropic.messages.countTokens({
      ...base,
      model: 'gpt-same',
      tools: [messagesTool()],
    });
    const none = await anthropic.messages.countTokens({ ...base, model: 'gpt-same' });
    expect(only.input_tokens).toBe(none.input_tokens);
  });

  it('strips a protection tool before asking Anthropic', async () => {
    upstream.on('/v1/messages/count_tokens', () => ({ json: { input_tokens: 42 } }));
    const counted = await anthropic.messages.countTokens({
      ...base,
      model: 'claude-same',
      tools: [messagesTool(), WEATHER_MESSAGES],
    });
    expect(counted.input_tokens).toBe(42);
    expect(upstream.last().raw).not.toContain(FILTER);
    expect(upstream.last().body.tools).toEqual([WEATHER_MESSAGES]);
  });
});
