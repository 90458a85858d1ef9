import { fromEncryptedContent } from '../../core/reasoning-carrier';
import type {
  CanonicalMessage,
  CanonicalResponseFormat,
  CanonicalRequest,
  CanonicalTool,
  CanonicalToolChoice,
  ContentPart,
  ImagePart,
  ReasoningEffort,
  ReasoningPart,
  SystemPart,
  TextPart,
} from '../../core/canonical';
import { imageFromUrl, jsonSchemaFormat } from '../chat-completions/chat.decoder';
import type {
  ResponsesContentPart,
  ResponsesInputItem,
  ResponsesRequestDto,
  ResponsesTool,
} from './responses-request.dto';
import { ToolNamespaces, namespaceFunctions, qualifiedName } from './responses.namespaces';
import { own, setOwn } from '../../common/own';
import { RESPONSES_PARAMS } from './responses.params';

/** Fields the canonical model represents; everything else lands in `extra`. */
const MODELLED = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_output_tokens',
  'temperature',
  'top_p',
  'stream',
  'reasoning',
  'metadata',
  'user',
]);

function parts(content: string | ResponsesContentPart[] | undefined): (TextPart | ImagePart)[] {
  if (content === undefined) {
    return [];
  }
  if (typeof content === 'string') {
    return content === '' ? [] : [{ type: 'text', text: content }];
  }
  const out: (TextPart | ImagePart)[] = [];
  for (const part of content) {
    if ((part.type === 'input_text' || part.type === 'output_text') && part.text !== undefined) {
      out.push({ type: 'text', text: part.text });
    } else if (part.type === 'refusal' && part.refusal !== undefined) {
      out.push({ type: 'text', text: part.refusal });
    } else if (part.type === 'input_image' && part.image_url !== undefined) {
      out.push(imageFromUrl(part.image_url, part.detail));
    }
    // input_image by file_id, input_file, audio: no canonical form; dropped here.
  }
  return out;
}

function reasoningPart(item: ResponsesInputItem): ReasoningPart {
  const part: ReasoningPart = {
    type: 'reasoning',
    summary: (item.summary ?? []).map((s) => s.text),
  };
  const content = item.content;
  if (Array.isArray(content)) {
    const text = content
      .filter((c) => c.type === 'reasoning_text')
      .map((c) => c.text ?? '')
      .join('');
    if (text !== '') {
      part.text = text;
    }
  }
  if (typeof item.encrypted_content === 'string') {
    Object.assign(part, fromEncryptedContent(item.encrypted_content));
  }
  if (typeof item.id === 'string' && item.id !== '') {
    part.itemId = item.id;
  }
  return part;
}

function toolChoice(choice: unknown): CanonicalToolChoice | undefined {
  if (choice === 'auto' || choice === 'none' || choice === 'required') {
    return { type: choice };
  }
  const c = choice as { type?: unknown; name?: unknown } | null | undefined;
  if (c?.type === 'function' && typeof c.name === 'string') {
    return { type: 'tool', name: c.name };
  }
  // allowed_tools, hosted tools, mcp: no canonical form; the model decides.
  return undefined;
}

function functionTool(t: ResponsesTool, name: string): CanonicalTool {
  return {
    name,
    description: t.description ?? undefined,
    parameters: t.parameters ?? { type: 'object', properties: {} },
    strict: t.strict ?? undefined,
  };
}

/** Function tools, and the functions of namespace tools under their flat names. */
function tools(body: ResponsesRequestDto, namespaces: ToolNamespaces | undefined): CanonicalTool[] {
  const out: CanonicalTool[] = [];
  for (const t of body.tools ?? []) {
    if (t.type === 'function' && typeof t.name === 'string') {
      out.push(functionTool(t, t.name));
    } else if (t.type === 'namespace' && namespaces && typeof t.name === 'string') {
      for (const fn of namespaceFunctions(t)) {
        out.push(functionTool(fn, namespaces.flat(t.name, fn.name)));
      }
    }
  }
  return out;
}

/** The canonical name of a history call: namespaced ones by their flat name. */
function callName(item: ResponsesInputItem, namespaces: ToolNamespaces | undefined): string {
  const name = item.name ?? '';
  const namespace = item.namespace;
  if (typeof namespace !== 'string' || namespace === '') {
    return name;
  }
  return namespaces ? namespaces.flat(namespace, name) : qualifiedName(namespace, name);
}

/** `text.format` in canonical terms. */
function responseFormat(body: ResponsesRequestDto): CanonicalResponseFormat | undefined {
  const f = (body.text as { format?: Record<string, unknown> } | null | undefined)?.format;
  if (f?.type === 'text' || f?.type === 'json_object') {
    return { type: f.type };
  }
  if (f?.type === 'json_schema') {
    return jsonSchemaFormat(f);
  }
  return undefined;
}

/**
 * Decodes a validated Responses request into the canonical request. Consecutive
 * assistant-side items (reasoning, message, function_call) form one assistant turn;
 * consecutive tool outputs, and a user message right after them, form one user turn.
 */
export function decodeResponsesRequest(body: ResponsesRequestDto): CanonicalRequest {
  const namespaces = ToolNamespaces.of(body.tools);
  const system: SystemPart[] = [];
  let afterSystem = false;
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    system.push({ type: 'text', text: body.instructions });
  }
  const messages: CanonicalMessage[] = [];
  const push = (role: CanonicalMessage['role'], content: ContentPart[]): void => {
    const last = messages[messages.length - 1];
    const merge =
      !afterSystem &&
      last?.role === role &&
      (role === 'assistant' || last.parts.some((p) => p.type === 'tool_result'));
    if (merge) {
      last.parts.push(...content);
    } else {
      messages.push({ role, parts: content });
    }
  };
  const items: ResponsesInputItem[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  for (const item of items) {
    switch (item.type ?? 'message') {
      case 'message':
        if (item.role === 'system' || item.role === 'developer') {
          // After the first turn it is a mid-conversation system message, kept in place.
          for (const p of parts(item.content)) {
            if (p.type === 'text') {
              system.push(messages.length > 0 ? { ...p, at: messages.length } : p);
            }
          }
          afterSystem = messages.length > 0;
          continue;
        } else {
          push(item.role === 'assistant' ? 'assistant' : 'user', parts(item.content));
        }
        break;
      case 'function_call':
        push('assistant', [
          {
            type: 'tool_call',
            id: item.call_id ?? '',
            name: callName(item, namespaces),
            arguments: item.arguments ?? '',
          },
        ]);
        break;
      case 'function_call_output':
        push('user', [
          { type: 'tool_result', toolCallId: item.call_id ?? '', content: parts(item.output) },
        ]);
        break;
      case 'reasoning':
        push('assistant', [reasoningPart(item)]);
        break;
      default:
        // item_reference and hosted tool items need the provider's own storage.
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
  const reasoning = body.reasoning;
  const summary = reasoning?.summary ?? reasoning?.generate_summary ?? undefined;
  return {
    model: body.model,
    system,
    messages,
    tools: tools(body, namespaces),
    toolChoice: toolChoice(body.tool_choice),
    parallelToolCalls: body.parallel_tool_calls ?? undefined,
    maxOutputTokens: body.max_output_tokens ?? undefined,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    stop: [],
    stream: body.stream === true,
    reasoning:
      reasoning && (reasoning.effort || summary)
        ? {
            effort: (reasoning.effort ?? undefined) as ReasoningEffort | undefined,
            summary,
          }
        : undefined,
    metadata: body.metadata ?? undefined,
    ...(typeof body.user === 'string' ? { user: body.user } : {}),
    ...(responseFormat(body) ? { responseFormat: responseFormat(body) } : {}),
    source: 'responses',
    paramNames: RESPONSES_PARAMS,
    extra,
  };
}
