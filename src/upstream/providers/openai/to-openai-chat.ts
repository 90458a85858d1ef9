import type { CatalogModel } from '../../../catalog/catalog.types';
import type { CanonicalRequest, ImagePart, TextPart } from '../../../core/canonical';
import {
  type ExtraPolicy,
  type TranslatedRequest,
  applyExtraPolicy,
  clampedMaxOutput,
  openAiCacheFields,
  openAiEffort,
  openAiToolChoice,
  paramName,
  rejectParam,
  takeOutputConfigs,
} from '../../translate-params';

type Json = Record<string, unknown>;

/** OpenAI accepts at most four stop sequences. */
const MAX_STOP = 4;

/** Chat completion fields an OpenAI-kind upstream understands as they are. */
const OPENAI_CHAT_FIELDS = new Set([
  'service_tier',
  'seed',
  'logit_bias',
  'frequency_penalty',
  'presence_penalty',
  'prompt_cache_key',
  'safety_identifier',
]);

/** A server that only copies the API (vLLM, llama.cpp...), not OpenAI's own or Azure's. */
function isCompatible(model: CatalogModel): boolean {
  return model.provider.kind === 'openai-compatible';
}

function policy(model: CatalogModel, req: CanonicalRequest): ExtraPolicy {
  const compatible = isCompatible(model);
  const forward = new Set(OPENAI_CHAT_FIELDS);
  if (compatible) {
    // vLLM and friends read top_k as Anthropic does.
    forward.add('top_k');
  }
  if (req.source === 'messages') {
    // Anthropic's service tiers ('standard_only') are not OpenAI's.
    forward.delete('service_tier');
  }
  return {
    target: compatible ? 'OpenAI-compatible chat completions' : 'OpenAI Chat Completions',
    forward,
    ignore: new Set(['include']),
    reject: {
      background: (v) => v === true,
      // The client's format could not show them.
      top_logprobs: (v) => typeof v === 'number' && v > 0,
      // Anthropic server-side machinery with no chat equivalent.
      mcp_servers: (v) => Array.isArray(v) && v.length > 0,
      container: () => true,
    },
  };
}

export function imageUrl(part: ImagePart): string {
  return part.source.kind === 'url'
    ? part.source.url
    : `data:${part.source.mediaType};base64,${part.source.data}`;
}

/** A user turn's content: a plain string when it is text only (what every server reads). */
function userContent(parts: (TextPart | ImagePart)[]): string | Json[] {
  const texts = parts.filter((p): p is TextPart => p.type === 'text');
  if (texts.length === parts.length) {
    return texts.map((p) => p.text).join('');
  }
  return parts.map((p) =>
    p.type === 'text'
      ? { type: 'text', text: p.text }
      : {
          type: 'image_url',
          image_url: p.detail ? { url: imageUrl(p), detail: p.detail } : { url: imageUrl(p) },
        },
  );
}

/** Tool results are text on chat; images inside them cannot travel (noted in the text). */
function toolResultText(parts: (TextPart | ImagePart)[]): string {
  return parts.map((p) => (p.type === 'text' ? p.text : '[image omitted]')).join('');
}

/**
 * System messages stay where the client put them: the leading ones first, a
 * mid-conversation one before the turn it preceded (chat allows system messages anywhere).
 */
function messages(req: CanonicalRequest): Json[] {
  const system = (p: TextPart): Json => ({ role: 'system', content: p.text });
  const out: Json[] = req.system.filter((p) => p.at === undefined).map(system);
  const placed = req.system.filter((p) => p.at !== undefined);
  for (const [i, m] of req.messages.entries()) {
    const here = placed.filter((p) => p.at === i).map(system);
    if (m.role === 'user') {
      // Tool messages first: they must follow the assistant message that made the calls.
      const rest: (TextPart | ImagePart)[] = [];
      for (const part of m.parts) {
        if (part.type === 'tool_result') {
          const text = toolResultText(part.content);
          out.push({
            role: 'tool',
            tool_call_id: part.toolCallId,
            content: part.isError ? `Error: ${text}` : text,
          });
        } else if (part.type === 'text' || part.type === 'image') {
          rest.push(part);
        }
      }
      // After the tool messages, which must follow the assistant's tool calls directly.
      out.push(...here);
      if (rest.length > 0) {
        out.push({ role: 'user', content: userContent(rest) });
      }
      continue;
    }
    out.push(...here);
    // Reasoning from an earlier turn has no chat request field: the model does not need it.
    let text = '';
    const toolCalls: Json[] = [];
    for (const part of m.parts) {
      if (part.type === 'text') {
        text += part.text;
      } else if (part.type === 'tool_call') {
        toolCalls.push({
          id: part.id,
          type: 'function',
          function: { name: part.name, arguments: part.arguments },
        });
      }
    }
    if (text === '' && toolCalls.length === 0) {
      continue;
    }
    const message: Json = { role: 'assistant', content: text === '' ? null : text };
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls;
    }
    out.push(message);
  }
  for (const p of placed) {
    if ((p.at ?? 0) >= req.messages.length) {
      out.push(system(p));
    }
  }
  return out;
}

/**
 * canonical -> Chat Completions request body, for OpenAI and OpenAI-compatible servers.
 * Streams always ask for the usage chunk (`stream_options.include_usage`), so usage is
 * never missing. Max tokens go as `max_completion_tokens` to OpenAI (which deprecated
 * `max_tokens`) and as `max_tokens` to compatible servers (which all read it).
 * Reasoning effort is sent only to models the catalog marks as reasoning models.
 */
export function toOpenAiChatRequest(req: CanonicalRequest, model: CatalogModel): TranslatedRequest {
  const dropped: string[] = [];
  const extra = { ...req.extra };
  const verbosity = takeOutputConfigs(extra, dropped, ['verbosity']);
  const cacheFields = openAiCacheFields(req, extra, dropped);
  const forwarded = applyExtraPolicy(extra, policy(model, req), dropped);
  const body: Json = { model: model.upstreamId, messages: messages(req) };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const fn: Json = { name: t.name, parameters: t.parameters };
      if (t.description !== undefined) {
        fn.description = t.description;
      }
      if (t.strict !== undefined) {
        fn.strict = t.strict;
      }
      return { type: 'function', function: fn };
    });
    const choice = openAiToolChoice(req, (name) => ({ type: 'function', function: { name } }));
    if (choice !== undefined) {
      body.tool_choice = choice;
    }
    if (req.parallelToolCalls !== undefined) {
      body.parallel_tool_calls = req.parallelToolCalls;
    }
  }
  const maxTokens = clampedMaxOutput(req, model.maxOutputTokens, dropped);
  if (maxTokens !== undefined) {
    // OpenAI's own API (and Azure's) wants the current field; servers that copy it, the old one.
    body[isCompatible(model) ? 'max_tokens' : 'max_completion_tokens'] = maxTokens;
  }
  if (req.temperature !== undefined) {
    body.temperature = req.temperature;
  }
  if (req.topP !== undefined) {
    body.top_p = req.topP;
  }
  if (req.stop.length > 0) {
    if (req.stop.length > MAX_STOP && !isCompatible(model)) {
      rejectParam(paramName(req, 'stop'), 'OpenAI Chat Completions', ` (at most ${MAX_STOP})`);
    }
    body.stop = req.stop;
  }
  const effort = openAiEffort(req.reasoning);
  if (effort !== undefined) {
    if (model.capabilities.reasoning) {
      body.reasoning_effort = effort;
    } else if (effort !== 'none') {
      dropped.push(paramName(req, 'reasoning'));
    }
  }
  const format = req.responseFormat;
  if (format?.type === 'json_object') {
    body.response_format = { type: 'json_object' };
  } else if (format?.type === 'json_schema') {
    const schema: Json = { name: format.name ?? 'response', schema: format.schema ?? {} };
    if (format.description !== undefined) {
      schema.description = format.description;
    }
    if (format.strict !== undefined) {
      schema.strict = format.strict;
    }
    body.response_format = { type: 'json_schema', json_schema: schema };
  }
  // Messages' `metadata.user_id` (Claude Code's is a long JSON string) goes only hashed.
  if (req.user !== undefined && req.source !== 'messages') {
    body.user = req.user;
  }
  const metadata = Object.entries(req.metadata ?? {}).filter(([k]) => k !== 'user_id');
  if (metadata.length > 0) {
    if (req.source === 'messages') {
      dropped.push(paramName(req, 'metadata'));
    } else {
      body.metadata = Object.fromEntries(metadata);
    }
  }
  if (verbosity !== undefined) {
    body.verbosity = verbosity;
  }
  if (req.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  Object.assign(body, cacheFields, forwarded);
  return { body, dropped: [...new Set(dropped)] };
}
