import { fromThinkingSignature } from '../../core/reasoning-carrier';
import { cacheMarker } from '../../core/cache-marker';
import type {
  CacheMarker,
  CanonicalMessage,
  CanonicalResponseFormat,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  ContentPart,
  ImagePart,
  ReasoningEffort,
  SystemPart,
  TextPart,
  ToolCallPart,
  ToolResultPart,
} from '../../core/canonical';
import type {
  CountTokensRequestDto,
  MessagesContentBlock,
  MessagesRequestDto,
  MessagesTextBlock,
} from './messages-request.dto';
import { own, setOwn } from '../../common/own';
import { MESSAGES_PARAMS } from './messages.params';

/** A Messages or count_tokens body; the generation fields are absent from the latter. */
export type DecodableMessagesBody = CountTokensRequestDto & Partial<MessagesRequestDto>;

/**
 * Fields the canonical model represents; everything else lands in `extra`. `output_config`
 * stays in `extra` too: only its `effort` is modelled (for adaptive thinking), not `format`.
 */
const MODELLED = new Set([
  'model',
  'system',
  'messages',
  'max_tokens',
  'tools',
  'tool_choice',
  'stop_sequences',
  'temperature',
  'top_p',
  'stream',
  'thinking',
  'metadata',
]);

const EFFORTS = new Set<string>(['low', 'medium', 'high', 'xhigh', 'max']);

type Json = Record<string, unknown>;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `part` with the block's breakpoint, when it has one. */
function withCache<P extends { cache?: CacheMarker }>(part: P, block: unknown): P {
  const marker = cacheMarker(block);
  if (marker !== undefined) {
    part.cache = marker;
  }
  return part;
}

function imagePart(source: Json): ImagePart | undefined {
  if (source.type === 'base64') {
    return {
      type: 'image',
      source: { kind: 'base64', mediaType: str(source.media_type), data: str(source.data) },
    };
  }
  if (source.type === 'url') {
    return { type: 'image', source: { kind: 'url', url: str(source.url) } };
  }
  // `file` sources name an upload the canonical model cannot carry.
  return undefined;
}

/** Text and images, as tool results and documents may nest them. */
function simpleParts(content: unknown): (TextPart | ImagePart)[] {
  if (typeof content === 'string') {
    return content === '' ? [] : [{ type: 'text', text: content }];
  }
  if (!Array.isArray(content)) {
    return [];
  }
  const parts: (TextPart | ImagePart)[] = [];
  for (const block of content as MessagesContentBlock[]) {
    if (block.type === 'text') {
      parts.push(withCache<TextPart>({ type: 'text', text: str(block.text) }, block));
    } else if (block.type === 'image') {
      const image = imagePart(block.source as Json);
      if (image) {
        parts.push(withCache(image, block));
      }
    }
  }
  return parts;
}

/**
 * Documents with a text or content source become text. PDFs (base64, URL or file) have
 * no canonical part yet, so the canonical path cannot pass them on; the fast path does.
 */
function documentParts(source: Json): TextPart[] {
  if (source.type === 'text') {
    return [{ type: 'text', text: str(source.data) }];
  }
  if (source.type === 'content') {
    return simpleParts(source.content).filter((p): p is TextPart => p.type === 'text');
  }
  return [];
}

function blockParts(block: MessagesContentBlock): ContentPart[] {
  switch (block.type) {
    case 'text':
      return [withCache<TextPart>({ type: 'text', text: str(block.text) }, block)];
    case 'image': {
      const image = imagePart(block.source as Json);
      return image ? [withCache(image, block)] : [];
    }
    case 'document': {
      const parts = documentParts(block.source as Json);
      if (parts.length > 0) {
        withCache(parts[parts.length - 1], block);
      }
      return parts;
    }
    case 'tool_use':
      return [
        withCache<ToolCallPart>(
          {
            type: 'tool_call',
            id: str(block.id),
            name: str(block.name),
            arguments: JSON.stringify(block.input ?? {}),
          },
          block,
        ),
      ];
    case 'tool_result':
      return [
        withCache<ToolResultPart>(
          {
            type: 'tool_result',
            toolCallId: str(block.tool_use_id),
            content: simpleParts(block.content),
            ...(typeof block.is_error === 'boolean' ? { isError: block.is_error } : {}),
          },
          block,
        ),
      ];
    case 'thinking':
      // An OpenAI reasoning payload shown as a thinking block comes back out of its signature.
      return [
        {
          type: 'reasoning',
          text: str(block.thinking),
          ...fromThinkingSignature(str(block.signature)),
        },
      ];
    case 'redacted_thinking':
      return [{ type: 'reasoning', encrypted: str(block.data), redacted: true }];
    default:
      // Server-tool blocks, search results, ...: nothing the canonical model carries.
      return [];
  }
}

function messageParts(content: string | MessagesContentBlock[]): ContentPart[] {
  return typeof content === 'string' ? simpleParts(content) : content.flatMap(blockParts);
}

function systemParts(system: string | MessagesTextBlock[] | undefined): SystemPart[] {
  if (system === undefined) {
    return [];
  }
  if (typeof system === 'string') {
    return system === '' ? [] : [{ type: 'text', text: system }];
  }
  return system.map((b) => withCache<SystemPart>({ type: 'text', text: b.text }, b));
}

function tools(body: DecodableMessagesBody): CanonicalTool[] {
  return (
    (body.tools ?? [])
      // Server tools (versioned `type`, no schema) run at Anthropic: nothing canonical to pass.
      .filter((t) => t.type === undefined || t.type === 'custom')
      .map((t) =>
        withCache<CanonicalTool>(
          {
            name: t.name,
            description: t.description,
            parameters: t.input_schema ?? { type: 'object', properties: {} },
            strict: t.strict,
          },
          t,
        ),
      )
  );
}

function toolChoice(body: DecodableMessagesBody): CanonicalToolChoice | undefined {
  const choice = body.tool_choice;
  switch (choice?.type) {
    case 'auto':
    case 'none':
      return { type: choice.type };
    case 'any':
      return { type: 'required' };
    case 'tool':
      return { type: 'tool', name: choice.name };
    case undefined:
      return undefined;
  }
}

function reasoning(body: DecodableMessagesBody): CanonicalRequest['reasoning'] {
  const thinking = body.thinking;
  if (thinking?.type === 'enabled') {
    return { budgetTokens: thinking.budget_tokens };
  }
  if (thinking?.type === 'adaptive') {
    const effort = body.output_config?.effort;
    return {
      effort:
        typeof effort === 'string' && EFFORTS.has(effort) ? (effort as ReasoningEffort) : 'medium',
    };
  }
  return undefined;
}

/** `output_config.format` in canonical terms (JSON schema outputs). */
function responseFormat(body: DecodableMessagesBody): CanonicalResponseFormat | undefined {
  const format = (
    body.output_config as { format?: { type?: unknown; schema?: unknown } } | undefined
  )?.format;
  if (
    format?.type === 'json_schema' &&
    typeof format.schema === 'object' &&
    format.schema !== null
  ) {
    return { type: 'json_schema', schema: format.schema as Record<string, unknown> };
  }
  return undefined;
}

/** Decodes a validated Messages (or count_tokens) request into the canonical request. */
export function decodeMessagesRequest(body: DecodableMessagesBody): CanonicalRequest {
  const system = systemParts(body.system);
  const messages: CanonicalMessage[] = [];
  let afterSystem = false;
  for (const m of body.messages) {
    const parts = messageParts(m.content);
    if (m.role === 'system') {
      // A mid-conversation system message (newer API versions) keeps its place: before the
      // turn that follows it (leading ones are the system prompt).
      const at = messages.length > 0 ? { at: messages.length } : {};
      for (const p of parts) {
        if (p.type === 'text') {
          system.push({ ...p, ...at });
        }
      }
      afterSystem = messages.length > 0;
      continue;
    }
    const last = messages[messages.length - 1];
    // The API merges consecutive turns of the same role; so does the canonical model.
    if (last?.role === m.role && !afterSystem) {
      last.parts.push(...parts);
    } else {
      messages.push({ role: m.role, parts });
    }
    afterSystem = false;
  }
  const extra: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (!MODELLED.has(key)) {
      setOwn(extra, key, own(body, key));
    }
  }
  const disableParallel = (body.tool_choice as { disable_parallel_tool_use?: unknown } | undefined)
    ?.disable_parallel_tool_use;
  return {
    model: body.model,
    system,
    messages,
    tools: tools(body),
    toolChoice: toolChoice(body),
    parallelToolCalls: disableParallel === true ? false : undefined,
    maxOutputTokens: body.max_tokens,
    temperature: body.temperature,
    topP: body.top_p,
    stop: body.stop_sequences ?? [],
    stream: body.stream === true,
    reasoning: reasoning(body),
    metadata: body.metadata ?? undefined,
    ...(typeof body.metadata?.user_id === 'string' ? { user: body.metadata.user_id } : {}),
    ...(responseFormat(body) ? { responseFormat: responseFormat(body) } : {}),
    source: 'messages',
    paramNames: MESSAGES_PARAMS,
    extra,
  };
}
