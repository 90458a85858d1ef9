import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Builders for realistic OpenAI chat completion bodies and chunk streams. */

export function chatCompletion(
  model: string,
  content: string,
  extra: Record<string, unknown> = {},
): object {
  return {
    id: 'chatcmpl-test123',
    object: 'chat.completion',
    created: 1741569952,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 10,
      total_tokens: 29,
      prompt_tokens_details: { cached_tokens: 3, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    service_tier: 'default',
    system_fingerprint: 'fp_50cad350e4',
    ...extra,
  };
}

function chunk(
  model: string,
  delta: object,
  finish: string | null = null,
  usage?: object | null,
): object {
  const c: Record<string, unknown> = {
    id: 'chatcmpl-stream1',
    object: 'chat.completion.chunk',
    created: 1694268190,
    model,
    system_fingerprint: 'fp_44709d6fcb',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  };
  if (usage !== undefined) {
    c.usage = usage;
  }
  return c;
}

const USAGE = {
  prompt_tokens: 9,
  completion_tokens: 2,
  total_tokens: 11,
  prompt_tokens_details: { cached_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 0 },
};

/** A text stream in `pieces`, with the usage chunk when `includeUsage`. */
export function textStream(model: string, pieces: string[], includeUsage: boolean): object[] {
  const u = includeUsage ? null : undefined;
  const events = [
    chunk(model, { role: 'assistant', content: '', refusal: null }, null, u),
    ...pieces.map((p) => chunk(model, { content: p }, null, u)),
    chunk(model, {}, 'stop', u),
  ];
  if (includeUsage) {
    events.push({
      id: 'chatcmpl-stream1',
      object: 'chat.completion.chunk',
      created: 1694268190,
      model,
      choices: [],
      usage: USAGE,
    });
  }
  return events;
}

/** Two parallel tool calls with arguments split across deltas. */
export function toolCallStream(model: string): object[] {
  return [
    chunk(model, {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          index: 0,
          id: 'call_1',
          type: 'function',
          function: { name: 'get_weather', arguments: '' },
        },
      ],
    }),
    chunk(model, { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
    chunk(model, { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
    chunk(model, {
      tool_calls: [
        { index: 1, id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
      ],
    }),
    chunk(model, { tool_calls: [{ index: 1, function: { arguments: '{"tz":"CET"}' } }] }),
    chunk(model, {}, 'tool_calls'),
  ];
}

/** Recorded provider traffic lives in ../shared; tests that need it skip when it is absent. */
export const RECORDED_DIR = join(__dirname, '..', '..', '..', 'shared', 'fixtures', 'recorded');

export function recordedLines(relative: string): object[] | undefined {
  const path = join(RECORDED_DIR, relative);
  if (!existsSync(path)) {
    return undefined;
  }
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as object);
}

export function recordedJson(relative: string): object | undefined {
  const path = join(RECORDED_DIR, relative);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as object) : undefined;
}
