import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  ReasoningEffort,
} from '../../../core/canonical';
import { buildArguments, planLocalAnswer, tokenize } from './local-model';

function request(over: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return {
    model: 'local-echo-gpt',
    system: [{ type: 'text', text: 'Be helpful.' }],
    messages: [],
    tools: [],
    stop: [],
    stream: false,
    extra: {},
    ...over,
  };
}

function user(text: string): CanonicalMessage {
  return { role: 'user', parts: [{ type: 'text', text }] };
}

const WEATHER: CanonicalTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: { type: 'integer' },
      units: { type: 'string', default: 'metric' },
      verbose: { type: 'boolean' },
    },
    required: ['city', 'days'],
  },
};

const CLOCK: CanonicalTool = {
  name: 'get_time',
  parameters: { type: 'object', properties: { zone: { type: 'string' } } },
};

function sentences(reasoning: string[]): number {
  return (reasoning.join('').match(/\.(\s|$)/g) ?? []).length;
}

describe('planLocalAnswer', () => {
  it('echoes the last user message', () => {
    const plan = planLocalAnswer(request({ messages: [user('hello there world')] }));
    expect(plan.text.join('')).toBe('Echo: hello there world');
    expect(plan.reasoning).toEqual([]);
    expect(plan.signature).toBeUndefined();
    expect(plan.toolCalls).toEqual([]);
    expect(plan.finishReason).toBe('stop');
  });

  it('echoes the text of the last message only', () => {
    const plan = planLocalAnswer(
      request({
        messages: [
          user('first'),
          { role: 'assistant', parts: [{ type: 'text', text: 'x' }] },
          user('second'),
        ],
      }),
    );
    expect(plan.text.join('')).toBe('Echo: second');
  });

  it('greets when there is no message text', () => {
    expect(planLocalAnswer(request()).text.join('')).toBe('Hello from the local model.');
  });

  it('counts output tokens as the pieces it will stream', () => {
    const plan = planLocalAnswer(request({ messages: [user('a b c')] }));
    expect(plan.text).toEqual(['Echo:', ' a', ' b', ' c']);
    expect(plan.outputTokens).toBe(4);
    expect(plan.inputTokens).toBeGreaterThan(0);
  });

  it('counts more input tokens for a longer prompt', () => {
    const short = planLocalAnswer(request({ messages: [user('hi')] }));
    const long = planLocalAnswer(request({ messages: [user('hi '.repeat(200))] }));
    expect(long.inputTokens).toBeGreaterThan(short.inputTokens);
  });

  describe('reasoning', () => {
    it.each(['none', undefined] as const)('thinks nothing with effort %s', (effort) => {
      const plan = planLocalAnswer(
        request({ messages: [user('hi')], reasoning: effort ? { effort } : undefined }),
      );
      expect(plan.reasoning).toEqual([]);
      expect(plan.outputTokens).toBe(plan.text.length);
    });

    it('thinks more sentences for higher effort', () => {
      const efforts: ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh'];
      const counts = efforts.map((effort) =>
        sentences(
          planLocalAnswer(request({ messages: [user('hi')], reasoning: { effort } })).reasoning,
        ),
      );
      expect(counts[0]).toBeGreaterThanOrEqual(1);
      for (let i = 1; i < counts.length; i++) {
        expect(counts[i]).toBeGreaterThan(counts[i - 1]);
      }
      expect(counts[counts.length - 1]).toBeLessThanOrEqual(5);
    });

    it('thinks when only a thinking budget is given', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('hi')], reasoning: { budgetTokens: 2048 } }),
      );
      expect(plan.reasoning.length).toBeGreaterThan(0);
    });

    it('signs the reasoning deterministically', () => {
      const req = request({ messages: [user('hi')], reasoning: { effort: 'low' } });
      const a = planLocalAnswer(req);
      const b = planLocalAnswer(req);
      expect(a.signature).toBeDefined();
      expect(a.signature).toBe(b.signature);
      const other = planLocalAnswer(
        request({ messages: [user('hi')], reasoning: { effort: 'high' } }),
      );
      expect(other.signature).not.toBe(a.signature);
    });

    it('counts reasoning pieces in the output tokens', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('hi')], reasoning: { effort: 'high' } }),
      );
      expect(plan.outputTokens).toBe(plan.reasoning.length + plan.text.length);
    });
  });

  describe('tool calls', () => {
    it('calls a tool named in the message, with arguments from key=value pairs', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('please get_weather city=Paris days=3')],
          tools: [CLOCK, WEATHER],
        }),
      );
      expect(plan.finishReason).toBe('tool_calls');
      expect(plan.text).toEqual([]);
      expect(plan.toolCalls).toHaveLength(1);
      const call = plan.toolCalls[0];
      expect(call.name).toBe('get_weather');
      expect(call.id).toMatch(/^call_[0-9a-f]+$/);
      expect(JSON.parse(call.arguments.join(''))).toEqual({
        city: 'Paris',
        days: 3,
        units: 'metric',
      });
    });

    it('streams the arguments in several fragments that join into valid JSON', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('get_weather city="San Francisco" days=10 units=imperial verbose=true')],
          tools: [WEATHER],
        }),
      );
      const fragments = plan.toolCalls[0].arguments;
      expect(fragments.length).toBeGreaterThan(1);
      expect(JSON.parse(fragments.join(''))).toEqual({
        city: 'San Francisco',
        days: 10,
        units: 'imperial',
        verbose: true,
      });
      expect(plan.outputTokens).toBe(fragments.length);
    });

    it('calls the tool that tool_choice forces even when the message does not name it', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('what time is it? zone=UTC')],
          tools: [WEATHER, CLOCK],
          toolChoice: { type: 'tool', name: 'get_time' },
        }),
      );
      expect(plan.toolCalls.map((c) => c.name)).toEqual(['get_time']);
      expect(JSON.parse(plan.toolCalls[0].arguments.join(''))).toEqual({ zone: 'UTC' });
    });

    it('calls the first tool when tool_choice is required and none is named', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('hi')],
          tools: [CLOCK, WEATHER],
          toolChoice: { type: 'required' },
        }),
      );
      expect(plan.toolCalls.map((c) => c.name)).toEqual(['get_time']);
    });

    it('makes no tool call when tools are offered but not named or forced', () => {
      const plan = planLocalAnswer(request({ messages: [user('hi')], tools: [WEATHER] }));
      expect(plan.toolCalls).toEqual([]);
      expect(plan.finishReason).toBe('stop');
    });

    it('makes no tool call when tool_choice is none, even if the message names the tool', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('get_weather city=Paris')],
          tools: [WEATHER],
          toolChoice: { type: 'none' },
        }),
      );
      expect(plan.toolCalls).toEqual([]);
      expect(plan.text.join('')).toBe('Echo: get_weather city=Paris');
      expect(plan.finishReason).toBe('stop');
    });

    it('mentions the chosen tool in its reasoning', () => {
      const plan = planLocalAnswer(
        request({
          messages: [user('get_weather city=Rome')],
          tools: [WEATHER],
          reasoning: { effort: 'medium' },
        }),
      );
      expect(plan.reasoning.join('')).toContain('get_weather');
      expect(plan.outputTokens).toBe(plan.reasoning.length + plan.toolCalls[0].arguments.length);
    });

    it('gives each call a new id', () => {
      const req = request({ messages: [user('get_weather city=Oslo days=1')], tools: [WEATHER] });
      expect(planLocalAnswer(req).toolCalls[0].id).not.toBe(planLocalAnswer(req).toolCalls[0].id);
    });

    it('answers a tool result turn with the result instead of calling again', () => {
      const plan = planLocalAnswer(
        request({
          tools: [WEATHER],
          toolChoice: { type: 'required' },
          messages: [
            user('get_weather city=Paris days=1'),
            {
              role: 'assistant',
              parts: [
                {
                  type: 'tool_call',
                  id: 'call_9',
                  name: 'get_weather',
                  arguments: '{"city":"Paris"}',
                },
              ],
            },
            {
              role: 'user',
              parts: [
                {
                  type: 'tool_result',
                  toolCallId: 'call_9',
                  content: [{ type: 'text', text: 'sunny, 22C' }],
                },
              ],
            },
          ],
        }),
      );
      expect(plan.toolCalls).toEqual([]);
      expect(plan.text.join('')).toBe('Tool get_weather returned: sunny, 22C');
      expect(plan.finishReason).toBe('stop');
    });

    it('never splits a character across two argument fragments', () => {
      const plan = planLocalAnswer(
        request({
          // `{"city":"ab` is 11 code units, so the emoji straddles the first cut.
          messages: [user('get_weather city=ab😀 days=2')],
          tools: [WEATHER],
        }),
      );
      const fragments = plan.toolCalls[0].arguments;
      expect(JSON.parse(fragments.join(''))).toMatchObject({ city: 'ab😀' });
      const loneSurrogate =
        /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
      for (const fragment of fragments) {
        expect(fragment).not.toMatch(loneSurrogate);
      }
    });
  });

  describe('limits', () => {
    it('truncates the text at max tokens with finish reason length', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('one two three four')], maxOutputTokens: 3 }),
      );
      expect(plan.text).toEqual(['Echo:', ' one', ' two']);
      expect(plan.finishReason).toBe('length');
      expect(plan.outputTokens).toBe(3);
    });

    it('does not report length when the text fits exactly', () => {
      const plan = planLocalAnswer(request({ messages: [user('one two')], maxOutputTokens: 3 }));
      expect(plan.text.join('')).toBe('Echo: one two');
      expect(plan.finishReason).toBe('stop');
    });

    it('counts reasoning against max tokens', () => {
      const text = 'a b c d e f g h i j';
      const withoutReasoning = planLocalAnswer(
        request({ messages: [user(text)], maxOutputTokens: 40 }),
      );
      const plan = planLocalAnswer(
        request({ messages: [user(text)], maxOutputTokens: 40, reasoning: { effort: 'high' } }),
      );
      expect(withoutReasoning.finishReason).toBe('stop');
      expect(plan.reasoning.length).toBeLessThan(40);
      expect(plan.finishReason).toBe('length');
      expect(plan.reasoning.length + plan.text.length).toBe(40);
      expect(plan.outputTokens).toBe(40);
    });

    it('never plans more output tokens than max tokens, reasoning included', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('hi')], maxOutputTokens: 5, reasoning: { effort: 'high' } }),
      );
      expect(plan.finishReason).toBe('length');
      expect(plan.reasoning.length + plan.text.length).toBeLessThanOrEqual(5);
      expect(plan.outputTokens).toBeLessThanOrEqual(5);
    });

    it('cuts the text at a stop sequence', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('one two STOP three')], stop: ['STOP'] }),
      );
      expect(plan.text.join('')).toBe('Echo: one two ');
      expect(plan.finishReason).toBe('stop');
      expect(plan.stopSequence).toBe('STOP');
    });

    it('cuts at the earliest of several stop sequences', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('alpha beta gamma delta')], stop: ['delta', 'beta'] }),
      );
      expect(plan.text.join('')).toBe('Echo: alpha ');
      expect(plan.stopSequence).toBe('beta');
    });

    it('ignores stop sequences that do not occur', () => {
      const plan = planLocalAnswer(request({ messages: [user('alpha')], stop: ['zzz'] }));
      expect(plan.text.join('')).toBe('Echo: alpha');
      expect(plan.stopSequence).toBeUndefined();
    });

    it('names no stop sequence when max_tokens cut the text first', () => {
      const plan = planLocalAnswer(
        request({ messages: [user('a b c STOP d')], stop: ['STOP'], maxOutputTokens: 2 }),
      );
      expect(plan.finishReason).toBe('length');
      expect(plan.stopSequence).toBeUndefined();
    });
  });
});

describe('buildArguments', () => {
  it('reads key=value and key: value pairs, quoted or not', () => {
    expect(buildArguments(WEATHER, 'city: "New York", days=2; verbose=false')).toEqual({
      city: 'New York',
      days: 2,
      units: 'metric',
      verbose: false,
    });
  });

  it('does not match a key inside a longer word', () => {
    const tool: CanonicalTool = {
      name: 't',
      parameters: { type: 'object', properties: { city: { type: 'string' } } },
    };
    expect(buildArguments(tool, 'velocity=3')).toEqual({});
  });

  it('fills required fields without a value with typed placeholders', () => {
    const tool: CanonicalTool = {
      name: 't',
      parameters: {
        type: 'object',
        properties: {
          q: { type: 'string' },
          n: { type: 'number' },
          i: { type: 'integer' },
          b: { type: 'boolean' },
          a: { type: 'array' },
          o: { type: 'object' },
          e: { type: 'string', enum: ['red', 'green'] },
          optional: { type: 'string' },
        },
        required: ['q', 'n', 'i', 'b', 'a', 'o', 'e'],
      },
    };
    expect(buildArguments(tool, 'find something')).toEqual({
      q: 'find something',
      n: 0,
      i: 0,
      b: false,
      a: [],
      o: {},
      e: 'red',
    });
  });

  it('keeps a non-numeric value for a number field as text', () => {
    expect(buildArguments(WEATHER, 'city=Rome days=soon').days).toBe('soon');
  });

  it('handles a tool without properties', () => {
    expect(buildArguments({ name: 't', parameters: { type: 'object' } }, 'x=1')).toEqual({});
  });
});

describe('tokenize', () => {
  it('splits into words with their leading whitespace and keeps trailing space', () => {
    expect(tokenize('Hi  there\nfriend ')).toEqual(['Hi', '  there', '\nfriend', ' ']);
    expect(tokenize('Hi  there\nfriend ').join('')).toBe('Hi  there\nfriend ');
    expect(tokenize('')).toEqual([]);
  });
});
