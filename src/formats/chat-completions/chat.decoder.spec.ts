import type { CanonicalRequest } from '../../core/canonical';
import type { ChatCompletionRequestDto } from './chat-request.dto';
import { decodeChatRequest, imageFromUrl } from './chat.decoder';
import { CHAT_PARAMS } from './chat.params';

function decode(body: Record<string, unknown>): CanonicalRequest {
  return decodeChatRequest(body as unknown as ChatCompletionRequestDto);
}

const WEATHER_PARAMS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
};

describe('decodeChatRequest', () => {
  it('decodes a full conversation (golden)', () => {
    const body = {
      model: 'gpt-x',
      messages: [
        { role: 'system', content: 'You are terse.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at these' },
            {
              type: 'image_url',
              image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' },
            },
            { type: 'image_url', image_url: { url: 'https://img.test/cat.jpg' } },
          ],
        },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        {
          role: 'assistant',
          content: null,
          reasoning_content: 'Need the weather twice.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Lyon"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'rain' }] },
        { role: 'user', content: 'Thanks, summarise.' },
        { role: 'assistant', content: 'Paris: soleil. Lyon: pluie.' },
        { role: 'user', content: 'Merci' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather for a city',
            parameters: WEATHER_PARAMS,
            strict: true,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      parallel_tool_calls: true,
      max_tokens: 50,
      max_completion_tokens: 200,
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'high',
      metadata: { team: 'a' },
      seed: 7,
      response_format: { type: 'json_object' },
      user: 'u-1',
      n: 1,
    };

    expect(decode(body)).toEqual({
      model: 'gpt-x',
      system: [
        { type: 'text', text: 'You are terse.' },
        // Sent after the first turn: it keeps its place.
        { type: 'text', text: 'Answer in French.', at: 1 },
      ],
      messages: [
        {
          role: 'user',
          parts: [
            { type: 'text', text: 'Look at these' },
            {
              type: 'image',
              source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
              detail: 'high',
            },
            { type: 'image', source: { kind: 'url', url: 'https://img.test/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          parts: [
            { type: 'reasoning', text: 'Need the weather twice.' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '{"city":"Lyon"}' },
          ],
        },
        {
          role: 'user',
          parts: [
            {
              type: 'tool_result',
              toolCallId: 'call_1',
              content: [{ type: 'text', text: 'sunny' }],
            },
            {
              type: 'tool_result',
              toolCallId: 'call_2',
              content: [{ type: 'text', text: 'rain' }],
            },
            { type: 'text', text: 'Thanks, summarise.' },
          ],
        },
        { role: 'assistant', parts: [{ type: 'text', text: 'Paris: soleil. Lyon: pluie.' }] },
        { role: 'user', parts: [{ type: 'text', text: 'Merci' }] },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: WEATHER_PARAMS,
          strict: true,
        },
      ],
      toolChoice: { type: 'tool', name: 'get_weather' },
      parallelToolCalls: true,
      maxOutputTokens: 200,
      temperature: 0.2,
      topP: 0.9,
      stop: ['END'],
      stream: true,
      reasoning: { effort: 'high' },
      metadata: { team: 'a' },
      user: 'u-1',
      responseFormat: { type: 'json_object' },
      source: 'chat_completions',
      paramNames: CHAT_PARAMS,
      extra: { seed: 7, n: 1 },
    });
  });

  it('keeps system and developer text in message order', () => {
    const req = decode({
      model: 'm',
      messages: [
        { role: 'developer', content: 'first' },
        { role: 'user', content: 'hi' },
        {
          role: 'system',
          content: [
            { type: 'text', text: 'second' },
            { type: 'text', text: 'third' },
          ],
        },
      ],
    });
    expect(req.system.map((p) => p.text)).toEqual(['first', 'second', 'third']);
    expect(req.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
  });

  it('does not merge two plain user messages', () => {
    const req = decode({
      model: 'm',
      messages: [
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
      ],
    });
    expect(req.messages).toHaveLength(2);
  });

  it('starts a new user turn for tool results that follow an assistant turn', () => {
    const req = decode({
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'a', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'a', content: 'r1' },
      ],
    });
    expect(req.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(req.messages[2].parts).toEqual([
      { type: 'tool_result', toolCallId: 'a', content: [{ type: 'text', text: 'r1' }] },
    ]);
  });

  it('uses the name of a legacy function message as its tool call id', () => {
    const req = decode({
      model: 'm',
      messages: [{ role: 'function', name: 'lookup', content: '42' }],
    });
    expect(req.messages[0].parts[0]).toMatchObject({ type: 'tool_result', toolCallId: 'lookup' });
  });

  it('falls back to max_tokens when max_completion_tokens is absent or null', () => {
    expect(decode({ model: 'm', messages: [], max_tokens: 33 }).maxOutputTokens).toBe(33);
    expect(
      decode({ model: 'm', messages: [], max_tokens: 33, max_completion_tokens: null })
        .maxOutputTokens,
    ).toBe(33);
    expect(decode({ model: 'm', messages: [] }).maxOutputTokens).toBeUndefined();
  });

  it('gives defaults for a minimal request', () => {
    expect(decode({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).toEqual({
      model: 'm',
      system: [],
      messages: [{ role: 'user', parts: [{ type: 'text', text: 'x' }] }],
      tools: [],
      toolChoice: undefined,
      parallelToolCalls: undefined,
      maxOutputTokens: undefined,
      temperature: undefined,
      topP: undefined,
      stop: [],
      stream: false,
      source: 'chat_completions',
      paramNames: CHAT_PARAMS,
      reasoning: undefined,
      metadata: undefined,
      extra: {},
    });
  });

  it('keeps a stop array as is', () => {
    expect(decode({ model: 'm', messages: [], stop: ['a', 'b'] }).stop).toEqual(['a', 'b']);
  });

  it.each(['auto', 'none', 'required'])('decodes tool_choice %s', (choice) => {
    expect(decode({ model: 'm', messages: [], tool_choice: choice }).toolChoice).toEqual({
      type: choice,
    });
  });

  it('gives a tool without parameters an empty object schema and skips non-function tools', () => {
    const req = decode({
      model: 'm',
      messages: [],
      tools: [{ type: 'function', function: { name: 'ping' } }, { type: 'web_search' }],
    });
    expect(req.tools).toEqual([
      {
        name: 'ping',
        description: undefined,
        parameters: { type: 'object', properties: {} },
        strict: undefined,
      },
    ]);
  });

  it('turns a refusal part into text and makes no empty text part of an empty string', () => {
    const req = decode({
      model: 'm',
      messages: [
        { role: 'user', content: '' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] },
      ],
    });
    expect(req.messages[0].parts).not.toContainEqual({ type: 'text', text: '' });
    expect(req.messages[1]).toEqual({
      role: 'assistant',
      parts: [{ type: 'text', text: 'I cannot.' }],
    });
  });
});

describe('imageFromUrl', () => {
  it('splits a data URL into media type and base64 data', () => {
    expect(imageFromUrl('data:image/jpeg;base64,/9j/4AAQ')).toEqual({
      type: 'image',
      source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' },
    });
  });

  it('keeps an http URL as a URL, with its detail', () => {
    expect(imageFromUrl('https://x.test/a.png', 'low')).toEqual({
      type: 'image',
      source: { kind: 'url', url: 'https://x.test/a.png' },
      detail: 'low',
    });
  });

  it('keeps a data URL that is not base64 as a URL', () => {
    expect(imageFromUrl('data:image/svg+xml,<svg/>').source).toEqual({
      kind: 'url',
      url: 'data:image/svg+xml,<svg/>',
    });
  });
});
