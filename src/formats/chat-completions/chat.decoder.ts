import { fromThinkingSignature } from '../../core/reasoning-carrier';
import type {
  CanonicalMessage,
  CanonicalResponseFormat,
  CanonicalRequest,
  CanonicalToolChoice,
  ContentPart,
  ImagePart,
  ReasoningEffort,
  SystemPart,
  TextPart,
} from '../../core/canonical';
import { cacheMarker } from '../../core/cache-marker';
import type { ChatCompletionRequestDto, ChatMessage } from './chat-request.dto';
import { own, setOwn } from '../../common/own';
import { CHAT_PARAMS } from './chat.params';

/** Fields the canonical model represents; everything else lands in `extra`. */
const MODELLED = new Set([
  'model',
  'messages',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'reasoning_effort',
  'metadata',
  'response_format',
  'user',
]);

/** Splits a `data:` URL into media type and base64 payload; other URLs stay URLs. */
export function imageFromUrl(url: string, detail?: string): ImagePart {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  const part: ImagePart = match
    ? { type: 'image', source: { kind: 'base64', mediaType: match[1], data: match[2] } }
    : { type: 'image', source: { kind: 'url', url } };
  if (detail !== undefined) {
    part.detail = detail;
  }
  return part;
}

function contentParts(content: ChatMessage['content']): (TextPart | ImagePart)[] {
  if (content === undefined || content === null) {
    return [];
  }
  if (typeof content === 'string') {
    return content === '' ? [] : [{ type: 'text', text: content }];
  }
  const parts: (TextPart | ImagePart)[] = [];
  for (const part of content) {
    if (part.type === 'text' && typeof part.text === 'string') {
      // `cache_control` on a chat part: the convention of clients that reach Claude via chat.
      const marker = cacheMarker(part);
      parts.push(
        marker
          ? { type: 'text', text: part.text, cache: marker }
          : { type: 'text', text: part.text },
      );
    } else if (part.type === 'image_url' && part.image_url) {
      parts.push(imageFromUrl(part.image_url.url, part.image_url.detail));
    } else if (part.type === 'refusal' && typeof part.refusal === 'string') {
      parts.push({ type: 'text', text: part.refusal });
    }
  }
  return parts;
}

function toolChoice(choice: unknown): CanonicalToolChoice | undefined {
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    return { type: choice };
  }
  if (typeof choice === 'object' && choice !== null) {
    const fn = (choice as { function?: { name?: unknown } }).function;
    if (typeof fn?.name === 'string') {
      return { type: 'tool', name: fn.name };
    }
  }
  return undefined;
}

/**
 * Where an assistant message carries the gateway's `thinking_blocks`: on the message, or
 * nested in its first content part, where the OpenAI Agents SDK puts the whole answer
 * message it got unstreamed (its fields ride along on the text part).
 */
function thinkingBlocksOf(m: ChatMessage): unknown {
  if (Array.isArray(m.thinking_blocks)) {
    return m.thinking_blocks;
  }
  const first: unknown = Array.isArray(m.content) ? m.content[0] : undefined;
  return (first as { thinking_blocks?: unknown } | undefined)?.thinking_blocks;
}

/**
 * Signed reasoning an assistant message sends back: `thinking_blocks` (as the gateway
 * emits them) win over the plain `reasoning_content`, which carries no signature.
 */
function reasoningParts(m: ChatMessage): ContentPart[] {
  const thinkingBlocks = thinkingBlocksOf(m);
  if (Array.isArray(thinkingBlocks)) {
    const parts: ContentPart[] = [];
    for (const block of thinkingBlocks as Record<string, unknown>[]) {
      if (block?.type === 'thinking' && typeof block.thinking === 'string') {
        const signature = typeof block.signature === 'string' ? block.signature : '';
        parts.push({
          type: 'reasoning',
          text: block.thinking,
          ...fromThinkingSignature(signature),
        });
      } else if (block?.type === 'redacted_thinking' && typeof block.data === 'string') {
        parts.push({ type: 'reasoning', encrypted: block.data, redacted: true });
      }
    }
    if (parts.length > 0) {
      return parts;
    }
  }
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '') {
    return [{ type: 'reasoning', text: m.reasoning_content }];
  }
  return [];
}

/**
 * A JSON-schema output format from the fields chat nests in `json_schema` and Responses
 * puts flat in `text.format`.
 */
export function jsonSchemaFormat(fields: Record<string, unknown>): CanonicalResponseFormat {
  const out: CanonicalResponseFormat = { type: 'json_schema' };
  if (typeof fields.name === 'string') {
    out.name = fields.name;
  }
  if (typeof fields.description === 'string') {
    out.description = fields.description;
  }
  if (typeof fields.schema === 'object' && fields.schema !== null) {
    out.schema = fields.schema as Record<string, unknown>;
  }
  if (typeof fields.strict === 'boolean') {
    out.strict = fields.strict;
  }
  return out;
}

/** `response_format` in canonical terms; undefined for an unknown type. */
export function chatResponseFormat(format: unknown): CanonicalResponseFormat | undefined {
  const f = format as { type?: unknown; json_schema?: unknown } | null | undefined;
  if (f?.type === 'text' || f?.type === 'json_object') {
    return { type: f.type };
  }
  if (f?.type === 'json_schema' && typeof f.json_schema === 'object' && f.json_schema !== null) {
    return jsonSchemaFormat(f.json_schema as Record<string, unknown>);
  }
  return undefined;
}

/** Decodes a validated chat completion request into the canonical request. */
export function decodeChatRequest(body: ChatCompletionRequestDto): CanonicalRequest {
  const system: SystemPart[] = [];
  let afterSystem = false;
  const messages: CanonicalMessage[] = [];
  const push = (role: CanonicalMessage['role'], parts: ContentPart[]): void => {
    const last = messages[messages.length - 1];
    // Consecutive tool results (and a user turn right after them) form one user turn.
    if (
      last &&
      !afterSystem &&
      last.role === role &&
      role === 'user' &&
      last.parts.some((p) => p.type === 'tool_result')
    ) {
      last.parts.push(...parts);
    } else {
      messages.push({ role, parts });
    }
  };
  for (const m of body.messages) {
    switch (m.role) {
      case 'system':
      case 'developer':
        for (const p of contentParts(m.content)) {
          // After the first turn it is a mid-conversation system message, kept in place.
          if (p.type === 'text') {
            system.push(messages.length > 0 ? { ...p, at: messages.length } : p);
          }
        }
        afterSystem = messages.length > 0;
        continue;
      case 'user':
        push('user', contentParts(m.content));
        break;
      case 'assistant': {
        const parts: ContentPart[] = reasoningParts(m);
        parts.push(...contentParts(m.content));
        for (const call of m.tool_calls ?? []) {
          parts.push({
            type: 'tool_call',
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          });
        }
        messages.push({ role: 'assistant', parts });
        break;
      }
      case 'tool':
      case 'function':
        push('user', [
          {
            type: 'tool_result',
            toolCallId: m.tool_call_id ?? m.name ?? '',
            content: contentParts(m.content),
          },
        ]);
        break;
    }
    afterSystem = false;
  }
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (!MODELLED.has(key)) {
      setOwn(extra, key, own(body, key));
    }
  }
  const stop = body.stop;
  return {
    model: body.model,
    system,
    messages,
    tools: (body.tools ?? [])
      .filter((t) => t.type === 'function')
      .map((t) => ({
        name: t.function.name,
        description: t.function.description,
        parameters: t.function.parameters ?? { type: 'object', properties: {} },
        strict: t.function.strict,
      })),
    toolChoice: toolChoice(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls,
    maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: stop === undefined || stop === null ? [] : typeof stop === 'string' ? [stop] : stop,
    stream: body.stream === true,
    reasoning:
      typeof body.reasoning_effort === 'string'
        ? { effort: body.reasoning_effort as ReasoningEffort }
        : undefined,
    metadata: body.metadata ?? undefined,
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    ...(body.response_format ? { responseFormat: chatResponseFormat(body.response_format) } : {}),
    source: 'chat_completions',
    paramNames: CHAT_PARAMS,
    extra,
  };
}
