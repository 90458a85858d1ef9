/**
 * Reusable parts of the OpenAPI document: schemas of the request bodies (the fields the
 * gateway reads; every other field is forwarded, hence `additionalProperties`), answers,
 * stream events, error envelopes and headers. Plain objects: the document is data.
 */

type Schema = Record<string, unknown>;

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const open = (properties: Record<string, Schema>, required: string[] = []): Schema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: true,
});

/** SSE event names of the Responses API the gateway emits (`event:` equals `type`). */
export const RESPONSES_STREAM_EVENTS = [
  'response.created',
  'response.in_progress',
  'response.queued',
  'response.output_item.added',
  'response.output_item.done',
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.function_call_arguments.delta',
  'response.function_call_arguments.done',
  'response.reasoning_summary_part.added',
  'response.reasoning_summary_part.done',
  'response.reasoning_summary_text.delta',
  'response.reasoning_summary_text.done',
  'response.completed',
  'response.incomplete',
  'response.failed',
  'error',
];

/** SSE event names of Anthropic Messages streams. */
export const MESSAGES_STREAM_EVENTS = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
];

const message = open(
  {
    role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
    content: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }, { type: 'null' }],
    },
  },
  ['role'],
);

const protectionNote =
  'Gateway protections are requested as tools named after a protection (see the README); ' +
  'their verdicts come back in `x-gateway-protections`.';

export const schemas: Record<string, Schema> = {
  ChatCompletionRequest: {
    ...open(
      {
        model: { type: 'string', description: 'A catalog model id (GET /v1/models).' },
        messages: { type: 'array', minItems: 1, items: message },
        stream: { type: 'boolean', default: false },
        stream_options: open({ include_usage: { type: 'boolean' } }),
        max_tokens: { type: 'integer', minimum: 0 },
        max_completion_tokens: { type: 'integer', minimum: 0 },
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        top_p: { type: 'number', minimum: 0, maximum: 1 },
        tools: { type: 'array', items: { type: 'object' }, description: protectionNote },
        tool_choice: {},
        reasoning_effort: { type: 'string' },
        response_format: { type: 'object' },
      },
      ['model', 'messages'],
    ),
    description: 'OpenAI Chat Completions request; fields not listed are forwarded upstream.',
  },
  ChatCompletion: open(
    {
      id: { type: 'string' },
      object: { const: 'chat.completion' },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: { type: 'array', items: { type: 'object' } },
      usage: ref('OpenAiUsage'),
    },
    ['id', 'object', 'model', 'choices'],
  ),
  ChatCompletionChunk: {
    ...open(
      {
        id: { type: 'string' },
        object: { const: 'chat.completion.chunk' },
        model: { type: 'string' },
        choices: { type: 'array', items: { type: 'object' } },
        usage: { oneOf: [ref('OpenAiUsage'), { type: 'null' }] },
      },
      ['id', 'object', 'choices'],
    ),
    description:
      'One `data:` line of a Chat Completions stream; the stream ends with `data: [DONE]`. ' +
      'An error after the stream started arrives as `data: {"error": {...}}`.',
  },
  OpenAiUsage: open({
    prompt_tokens: { type: 'integer' },
    completion_tokens: { type: 'integer' },
    total_tokens: { type: 'integer' },
  }),
  ResponsesRequest: {
    ...open(
      {
        model: { type: 'string' },
        input: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
        instructions: { type: 'string' },
        stream: { type: 'boolean', default: false },
        store: { type: 'boolean' },
        previous_response_id: { type: 'string' },
        max_output_tokens: { type: 'integer', minimum: 0 },
        reasoning: open({ effort: { type: 'string' }, summary: { type: 'string' } }),
        tools: { type: 'array', items: { type: 'object' }, description: protectionNote },
        text: { type: 'object' },
      },
      ['model'],
    ),
    description: 'OpenAI Responses request; fields not listed are forwarded upstream.',
  },
  Response: open(
    {
      id: { type: 'string' },
      object: { const: 'response' },
      created_at: { type: 'integer' },
      status: { type: 'string' },
      model: { type: 'string' },
      output: { type: 'array', items: { type: 'object' } },
      usage: open({
        input_tokens: { type: 'integer' },
        output_tokens: { type: 'integer' },
        total_tokens: { type: 'integer' },
      }),
    },
    ['id', 'object', 'status', 'model', 'output'],
  ),
  ResponseDeleted: open(
    { id: { type: 'string' }, object: { const: 'response' }, deleted: { const: true } },
    ['id', 'deleted'],
  ),
  ResponsesStreamEvent: {
    ...open(
      {
        type: { type: 'string', enum: RESPONSES_STREAM_EVENTS },
        sequence_number: { type: 'integer' },
      },
      ['type'],
    ),
    description: 'One event of a Responses stream: `event: <type>` then `data: <this object>`.',
  },
  MessagesRequest: {
    ...open(
      {
        model: { type: 'string' },
        messages: { type: 'array', minItems: 1, items: message },
        system: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
        max_tokens: { type: 'integer', minimum: 0 },
        stream: { type: 'boolean', default: false },
        temperature: { type: 'number', minimum: 0, maximum: 1 },
        top_p: { type: 'number', minimum: 0, maximum: 1 },
        top_k: { type: 'integer', minimum: 0 },
        stop_sequences: { type: 'array', items: { type: 'string' } },
        tools: { type: 'array', items: { type: 'object' }, description: protectionNote },
        tool_choice: { type: 'object' },
        thinking: { type: 'object' },
        metadata: { type: 'object' },
      },
      ['model', 'messages', 'max_tokens'],
    ),
    description: 'Anthropic Messages request; fields not listed are forwarded upstream.',
  },
  CountTokensRequest: open(
    {
      model: { type: 'string' },
      messages: { type: 'array', minItems: 1, items: message },
      system: { oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
      tools: { type: 'array', items: { type: 'object' } },
    },
    ['model', 'messages'],
  ),
  CountTokensResult: open({ input_tokens: { type: 'integer' } }, ['input_tokens']),
  Message: open(
    {
      id: { type: 'string' },
      type: { const: 'message' },
      role: { const: 'assistant' },
      model: { type: 'string' },
      content: { type: 'array', items: { type: 'object' } },
      stop_reason: { type: ['string', 'null'] },
      usage: open({ input_tokens: { type: 'integer' }, output_tokens: { type: 'integer' } }),
    },
    ['id', 'type', 'role', 'model', 'content'],
  ),
  MessagesStreamEvent: {
    ...open({ type: { type: 'string', enum: MESSAGES_STREAM_EVENTS } }, ['type']),
    description: 'One event of a Messages stream: `event: <type>` then `data: <this object>`.',
  },
  OpenAiModel: open(
    {
      id: { type: 'string' },
      object: { const: 'model' },
      created: { type: 'integer' },
      owned_by: { type: 'string' },
    },
    ['id', 'object'],
  ),
  OpenAiModelList: open(
    { object: { const: 'list' }, data: { type: 'array', items: ref('OpenAiModel') } },
    ['object', 'data'],
  ),
  AnthropicModel: open(
    {
      id: { type: 'string' },
      type: { const: 'model' },
      display_name: { type: 'string' },
      created_at: { type: 'string', format: 'date-time' },
    },
    ['id', 'type'],
  ),
  AnthropicModelPage: open(
    {
      data: { type: 'array', items: ref('AnthropicModel') },
      has_more: { type: 'boolean' },
      first_id: { type: ['string', 'null'] },
      last_id: { type: ['string', 'null'] },
    },
    ['data', 'has_more'],
  ),
  OpenAiError: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string', examples: ['invalid_request_error', 'rate_limit_error'] },
          param: { type: ['string', 'null'] },
          code: { type: ['string', 'null'], examples: ['rate_limit_exceeded', 'model_not_found'] },
        },
      },
    },
  },
  AnthropicError: {
    type: 'object',
    required: ['type', 'error'],
    properties: {
      type: { const: 'error' },
      error: {
        type: 'object',
        required: ['type', 'message'],
        properties: {
          type: { type: 'string', examples: ['invalid_request_error', 'overloaded_error'] },
          message: { type: 'string' },
          details: { type: 'object' },
        },
      },
      request_id: { type: 'string' },
    },
  },
  Health: open({ status: { type: 'string', enum: ['ok', 'ready'] }, models: { type: 'integer' } }, [
    'status',
  ]),
  LimitsHealth: open(
    {
      storage: { type: 'string', enum: ['memory', 'redis'] },
      failMode: { type: 'string', enum: ['open', 'closed'] },
      failedOpen: { type: 'integer' },
      failedClosed: { type: 'integer' },
      storeErrors: { type: 'integer' },
    },
    ['storage', 'failMode'],
  ),
};

const header = (description: string, schema: Schema = { type: 'string' }): Schema => ({
  description,
  schema,
});

export const headers: Record<string, Schema> = {
  RequestId: header('The request id (the client `x-request-id` when sane); also `request-id`.'),
  Protections: header(
    'Protection verdicts, `name=verdict[;key=value]`, comma-separated (streams: a trailer).',
  ),
  Cache: header(
    'Response cache: `hit` (answered from the cache), `miss` (the upstream answered); absent when the cache does not apply.',
    { type: 'string', enum: ['hit', 'miss'] },
  ),
  RetryAfter: header('Seconds to wait before retrying.', { type: 'integer' }),
  OpenAiLimitRequests: header('Requests per minute allowed for the key.', { type: 'integer' }),
  OpenAiRemainingRequests: header('Requests left in the window.', { type: 'integer' }),
  OpenAiResetRequests: header('Time until the requests window resets, e.g. `1s`, `6m0s`.'),
  OpenAiLimitTokens: header('Tokens per minute allowed for the key.', { type: 'integer' }),
  OpenAiRemainingTokens: header('Tokens left in the window.', { type: 'integer' }),
  OpenAiResetTokens: header('Time until the tokens window resets.'),
  AnthropicLimitRequests: header('Requests per minute allowed.', { type: 'integer' }),
  AnthropicRemainingRequests: header('Requests left.', { type: 'integer' }),
  AnthropicResetRequests: header('RFC 3339 time the requests window resets.', {
    type: 'string',
    format: 'date-time',
  }),
  AnthropicLimitTokens: header('Tokens per minute allowed.', { type: 'integer' }),
  AnthropicRemainingTokens: header('Tokens left.', { type: 'integer' }),
  AnthropicResetTokens: header('RFC 3339 time the tokens window resets.', {
    type: 'string',
    format: 'date-time',
  }),
};

const hdr = (name: string): Schema => ({ $ref: `#/components/headers/${name}` });

/** Response headers of a generation endpoint, by error-envelope family. */
export function generationHeaders(family: 'openai' | 'anthropic'): Record<string, Schema> {
  const common = {
    'x-request-id': hdr('RequestId'),
    'x-gateway-protections': hdr('Protections'),
    'x-gateway-cache': hdr('Cache'),
  };
  return family === 'openai'
    ? {
        ...common,
        'x-ratelimit-limit-requests': hdr('OpenAiLimitRequests'),
        'x-ratelimit-remaining-requests': hdr('OpenAiRemainingRequests'),
        'x-ratelimit-reset-requests': hdr('OpenAiResetRequests'),
        'x-ratelimit-limit-tokens': hdr('OpenAiLimitTokens'),
        'x-ratelimit-remaining-tokens': hdr('OpenAiRemainingTokens'),
        'x-ratelimit-reset-tokens': hdr('OpenAiResetTokens'),
      }
    : {
        ...common,
        'anthropic-ratelimit-requests-limit': hdr('AnthropicLimitRequests'),
        'anthropic-ratelimit-requests-remaining': hdr('AnthropicRemainingRequests'),
        'anthropic-ratelimit-requests-reset': hdr('AnthropicResetRequests'),
        'anthropic-ratelimit-tokens-limit': hdr('AnthropicLimitTokens'),
        'anthropic-ratelimit-tokens-remaining': hdr('AnthropicRemainingTokens'),
        'anthropic-ratelimit-tokens-reset': hdr('AnthropicResetTokens'),
      };
}

const ERROR_STATUSES: Record<string, string> = {
  '400': 'Invalid request (validation, request limits, missing system prompt).',
  '401': 'Missing or invalid client key.',
  '403': 'The key may not use this model.',
  '404': 'Unknown model or route.',
  '413': 'Request body too large.',
  '429': 'Rate limit exceeded; see `retry-after` and the rate-limit headers.',
  '500': 'Unexpected gateway error.',
  '502': 'The upstream failed or answered malformed.',
  '503': 'Provider not configured, draining, or limits unavailable (fail closed).',
  '504': 'The upstream timed out.',
};

/** The error responses of both envelope families, as components.responses. */
export function errorResponses(): Record<string, Schema> {
  const out = new Map<string, Schema>();
  for (const family of ['OpenAi', 'Anthropic'] as const) {
    for (const [status, description] of Object.entries(ERROR_STATUSES)) {
      out.set(`${family}Error${status}`, {
        description,
        headers: {
          'x-request-id': hdr('RequestId'),
          ...(status === '429' || status === '503' ? { 'retry-after': hdr('RetryAfter') } : {}),
        },
        content: { 'application/json': { schema: ref(`${family}Error`) } },
      });
    }
  }
  return Object.fromEntries(out);
}

/** `$ref`s to the error responses of a family, keyed by status. */
export function errorsOf(
  family: 'OpenAi' | 'Anthropic',
  statuses: readonly string[],
): Record<string, Schema> {
  return Object.fromEntries(
    statuses.map((s) => [s, { $ref: `#/components/responses/${family}Error${s}` }]),
  );
}

export const GENERATION_ERRORS = [
  '400',
  '401',
  '403',
  '404',
  '413',
  '429',
  '500',
  '502',
  '503',
  '504',
] as const;
