import type { CatalogModel } from '../../../catalog/catalog.types';
import type {
  CacheMarker,
  CanonicalMessage,
  CanonicalRequest,
  ContentPart,
  ImagePart,
  TextPart,
} from '../../../core/canonical';
import {
  CHAT_ONLY_REJECTS,
  type ExtraPolicy,
  type TranslatedRequest,
  applyExtraPolicy,
  budgetForEffort,
  cacheMarkers,
  paramName,
  clampedMaxOutput,
  takeOutputConfigs,
} from '../../translate-params';
import { toolInput } from '../../../core/tool-arguments';
import { isClaudeSignature } from '../gemini/gemini.wire';

type Json = Record<string, unknown>;

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** Instruction added to the system prompt for `json_object`, which has no schema to enforce. */
export const JSON_OBJECT_INSTRUCTION =
  'Respond with a single valid JSON object and nothing else: no prose, no code fences.';

const POLICY: ExtraPolicy = {
  target: 'Anthropic Messages',
  // Top-level `cache_control`: automatic caching, from a Messages client on the canonical path.
  forward: new Set(['top_k', 'cache_control']),
  ignore: new Set(['stream_options', 'include']),
  reject: { ...CHAT_ONLY_REJECTS, background: (v) => v === true },
};

function cacheControl(marker: CacheMarker): Json {
  return marker.ttl === undefined ? { type: marker.type } : { type: marker.type, ttl: marker.ttl };
}

/** `block` with the part's `cache_control`, when it carries one. */
function cached(block: Json, marker: CacheMarker | undefined): Json {
  if (marker !== undefined) {
    block.cache_control = cacheControl(marker);
  }
  return block;
}

function image(part: ImagePart): Json {
  return cached(
    part.source.kind === 'base64'
      ? {
          type: 'image',
          source: { type: 'base64', media_type: part.source.mediaType, data: part.source.data },
        }
      : { type: 'image', source: { type: 'url', url: part.source.url } },
    part.cache,
  );
}

function simpleBlocks(parts: (TextPart | ImagePart)[]): Json[] {
  return parts
    .filter((p) => p.type === 'image' || p.text !== '')
    .map((p) => (p.type === 'text' ? cached({ type: 'text', text: p.text }, p.cache) : image(p)));
}

/** One canonical part as Anthropic content; undefined when the part cannot travel. */
function block(part: ContentPart): Json | undefined {
  switch (part.type) {
    case 'text':
      // Anthropic rejects empty text blocks.
      return part.text === '' ? undefined : cached({ type: 'text', text: part.text }, part.cache);
    case 'image':
      return image(part);
    case 'tool_call':
      return cached(
        { type: 'tool_use', id: part.id, name: part.name, input: toolInput(part.arguments) },
        part.cache,
      );
    case 'tool_result': {
      const out: Json = { type: 'tool_result', tool_use_id: part.toolCallId };
      const content = simpleBlocks(part.content);
      if (content.length > 0) {
        out.content = content;
      }
      if (part.isError !== undefined) {
        out.is_error = part.isError;
      }
      return cached(out, part.cache);
    }
    case 'reasoning':
      // Only Anthropic's own signed (or redacted) reasoning can go back; OpenAI payloads
      // and unsigned text mean nothing to it.
      if (part.redacted && part.encrypted !== undefined) {
        return { type: 'redacted_thinking', data: part.encrypted };
      }
      // A Gemini thought signature (an earlier turn served by Gemini) means nothing to Claude.
      if (isClaudeSignature(part.signature)) {
        return {
          type: 'thinking',
          thinking: part.text ?? (part.summary ?? []).join('\n\n'),
          signature: part.signature,
        };
      }
      return undefined;
  }
}

/**
 * Turns as Claude-family APIs require them (Anthropic Messages, Bedrock Converse): each
 * turn's blocks that `leads` says go first (tool results in a user turn, right after the
 * assistant turn that called them; reasoning in an assistant turn), no empty turns,
 * consecutive turns of one role merged so that the roles alternate.
 */
export function alternatingTurns(
  input: CanonicalMessage[],
  block: (part: ContentPart) => Json | undefined,
  leads: (role: CanonicalMessage['role'], block: Json) => boolean,
): { role: string; content: Json[] }[] {
  const out: { role: string; content: Json[] }[] = [];
  for (const m of input) {
    const blocks = m.parts.map(block).filter((b): b is Json => b !== undefined);
    const content = [
      ...blocks.filter((b) => leads(m.role, b)),
      ...blocks.filter((b) => !leads(m.role, b)),
    ];
    if (content.length === 0) {
      continue;
    }
    const last = out[out.length - 1];
    if (last?.role === m.role) {
      last.content.push(...content);
    } else {
      out.push({ role: m.role, content });
    }
  }
  return out;
}

/** Messages as Anthropic requires them: tool results, then thinking, lead their turns. */
function messages(input: CanonicalMessage[]): Json[] {
  return alternatingTurns(input, block, (role, b) =>
    role === 'user'
      ? b.type === 'tool_result'
      : b.type === 'thinking' || b.type === 'redacted_thinking',
  );
}

function toolChoice(req: CanonicalRequest): Json | undefined {
  if (req.tools.length === 0) {
    return undefined;
  }
  let choice: Json | undefined;
  switch (req.toolChoice?.type) {
    case 'auto':
    case 'none':
      choice = { type: req.toolChoice.type };
      break;
    case 'required':
      choice = { type: 'any' };
      break;
    case 'tool':
      choice = { type: 'tool', name: req.toolChoice.name };
      break;
    case undefined:
      break;
  }
  if (req.parallelToolCalls === false && choice?.type !== 'none') {
    choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  }
  return choice;
}

/** The thinking budget asked for, if any (before fitting it under max_tokens). */
function requestedBudget(req: CanonicalRequest): number | undefined {
  const r = req.reasoning;
  if (r?.budgetTokens !== undefined) {
    return r.budgetTokens;
  }
  if (r?.effort === undefined || r.effort === 'none') {
    return undefined;
  }
  return budgetForEffort(r.effort);
}

/**
 * Whether the assistant turn in progress (after the last user message without tool
 * results) called tools without leading signed thinking. With thinking on, Anthropic
 * refuses such a history ("a final assistant message must start with a thinking block"),
 * and a client of another format may not have kept the blocks (the OpenAI Agents SDK
 * does not): thinking is then turned off for this request, which Anthropic allows.
 */
function unsignedToolTurn(messages: Json[]): boolean {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const content = m.content as Json[];
    if (m.role === 'user') {
      if (!content.some((b) => b.type === 'tool_result')) {
        return false;
      }
      continue;
    }
    if (content.some((b) => b.type === 'tool_use')) {
      const first = content[0]?.type;
      return first !== 'thinking' && first !== 'redacted_thinking';
    }
  }
  return false;
}

/**
 * Default prompt-cache breakpoints for a request that carries none (a chat or Responses
 * client, which cannot place them): the end of the tools, of the system prompt, and of the
 * last assistant turn (the stable prefix of an agent loop, which the next request repeats).
 * Anthropic allows four; this places at most three, and a prefix too short to cache costs
 * nothing. Returns whether any was placed.
 */
function placeBreakpoints(body: Json): boolean {
  const ends: Json[] = [];
  const tools = body.tools as Json[] | undefined;
  if (tools && tools.length > 0) {
    ends.push(tools[tools.length - 1]);
  }
  const system = body.system as Json[] | undefined;
  if (system && system.length > 0) {
    ends.push(system[system.length - 1]);
  }
  const messages = body.messages as { role: string; content: Json[] }[];
  const lastAssistant = messages.findLastIndex((m) => m.role === 'assistant');
  if (lastAssistant >= 0) {
    const blocks = messages[lastAssistant].content;
    // Thinking blocks cannot carry cache_control; the turn's last block is never one.
    const last = blocks[blocks.length - 1];
    if (last.type !== 'thinking' && last.type !== 'redacted_thinking') {
      ends.push(last);
    }
  }
  for (const end of ends) {
    end.cache_control = { type: 'ephemeral' };
  }
  return ends.length > 0;
}

/**
 * canonical -> Anthropic Messages request body. Decisions (docs/translation.md):
 * - `max_tokens` is required: the client's value (lowered to the catalog's max output
 *   tokens and listed when larger), else the catalog's max output tokens.
 * - Effort becomes `thinking: {type: enabled, budget_tokens}` (minimal 1024 ... max 32768).
 *   OpenAI's max tokens include reasoning, like Anthropic's, so the budget is clamped
 *   below `max_tokens`; when that leaves less than Anthropic's 1024 minimum, `max_tokens`
 *   is raised to 1024 + the client's value instead.
 * - Thinking allows only temperature 1 and top_p >= 0.95, and no forced tool choice:
 *   other sampling values are dropped; a forced tool choice drops thinking. Both listed.
 * - Temperature above 1 (OpenAI allows 2) is clamped to 1; newer models reject
 *   temperature together with top_p, so top_p is dropped then. Both listed.
 * - `json_schema` output uses `output_config.format`; `json_object` adds an instruction
 *   to the system prompt (Anthropic has no schema-less JSON mode).
 * - `user` becomes `metadata.user_id`; other metadata has no Anthropic field (dropped).
 * - Thinking goes off (listed) when the assistant tool turn in progress has no signed
 *   thinking to lead with (see {@link unsignedToolTurn}).
 * - Prompt caching: the client's `cache_control` markers go where they were; a request
 *   without any gets default breakpoints ({@link placeBreakpoints}) unless it comes from a
 *   Messages client (whose choice it was) or the catalog says `cache_breakpoints: off`.
 */
export function toAnthropicRequest(req: CanonicalRequest, model: CatalogModel): TranslatedRequest {
  const dropped: string[] = [];
  const extra = { ...req.extra };
  if (takeOutputConfigs(extra, dropped, ['verbosity']) !== undefined) {
    dropped.push(paramName(req, 'verbosity'));
  }
  // OpenAI's cache routing key has no Anthropic field: breakpoints do its job (below).
  const cacheKey = extra.prompt_cache_key;
  delete extra.prompt_cache_key;
  const forwarded = applyExtraPolicy(extra, POLICY, dropped);

  const body: Json = { model: model.upstreamId };
  const clientMax = clampedMaxOutput(req, model.maxOutputTokens, dropped);
  let maxTokens = clientMax ?? model.maxOutputTokens;

  // Mid-conversation system text joins the system prompt: the Messages API has no place
  // for it among the turns (only behind a beta a chat client cannot have asked for).
  const system = req.system
    .filter((p) => p.text !== '')
    .map((p) => cached({ type: 'text', text: p.text }, p.cache));
  const format = req.responseFormat;
  if (format?.type === 'json_object') {
    system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION });
  } else if (format?.type === 'json_schema') {
    body.output_config = {
      format: { type: 'json_schema', schema: format.schema ?? { type: 'object' } },
    };
  }
  if (system.length > 0) {
    body.system = system;
  }
  body.messages = messages(req.messages);

  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const tool: Json = { name: t.name, input_schema: t.parameters };
      if (t.description !== undefined) {
        tool.description = t.description;
      }
      return cached(tool, t.cache);
    });
  }
  const marked = cacheMarkers(req).length > 0 || forwarded.cache_control !== undefined;
  const placed =
    !marked && req.source !== 'messages' && model.cacheBreakpoints !== 'off'
      ? placeBreakpoints(body)
      : false;
  if (cacheKey !== undefined && cacheKey !== null && !marked && !placed) {
    dropped.push('prompt_cache_key');
  }
  const choice = toolChoice(req);
  if (choice) {
    body.tool_choice = choice;
  }

  let budget = requestedBudget(req);
  if (budget !== undefined && !model.capabilities.reasoning) {
    dropped.push(paramName(req, 'reasoning'));
    budget = undefined;
  }
  if (budget !== undefined && (choice?.type === 'any' || choice?.type === 'tool')) {
    dropped.push(paramName(req, 'reasoning'));
    budget = undefined;
  }
  if (budget !== undefined && unsignedToolTurn(body.messages as Json[])) {
    dropped.push(paramName(req, 'reasoning'));
    budget = undefined;
  }
  if (budget !== undefined) {
    ({ budget, maxTokens } = fitThinking(budget, maxTokens, clientMax, model.maxOutputTokens));
    if (budget === undefined) {
      dropped.push(paramName(req, 'reasoning'));
    } else {
      body.thinking = { type: 'enabled', budget_tokens: budget };
    }
  }
  body.max_tokens = maxTokens;

  if (req.temperature !== undefined) {
    if (budget !== undefined && req.temperature !== 1) {
      dropped.push(paramName(req, 'temperature'));
    } else {
      if (req.temperature > 1) {
        dropped.push(paramName(req, 'temperature'));
      }
      body.temperature = Math.min(req.temperature, 1);
    }
  }
  if (req.topP !== undefined) {
    if ((budget !== undefined && req.topP < 0.95) || body.temperature !== undefined) {
      dropped.push(paramName(req, 'topP'));
    } else {
      body.top_p = req.topP;
    }
  }
  if (req.stop.length > 0) {
    body.stop_sequences = req.stop;
  }
  if (req.user !== undefined) {
    body.metadata = { user_id: req.user };
  }
  const otherMetadata = Object.keys(req.metadata ?? {}).filter((k) => k !== 'user_id');
  if (otherMetadata.length > 0) {
    dropped.push(paramName(req, 'metadata'));
  }
  if (req.stream) {
    body.stream = true;
  }
  Object.assign(body, forwarded);
  return { body, dropped: [...new Set(dropped)] };
}

/**
 * A thinking budget within the output cap, as Claude requires (budget < max_tokens, at least
 * its smallest budget): the cap is raised for it up to the model's limit when the client set
 * none or too small a one; undefined budget when even the model's limit leaves no room.
 */
export function fitThinking(
  requested: number,
  maxTokens: number,
  clientMax: number | undefined,
  modelMax: number,
): { budget: number | undefined; maxTokens: number } {
  const budget = Math.max(MIN_THINKING_BUDGET, Math.min(requested, maxTokens - 1));
  if (budget >= maxTokens) {
    maxTokens = Math.min(budget + (clientMax ?? MIN_THINKING_BUDGET), modelMax);
  }
  return budget < maxTokens ? { budget, maxTokens } : { budget: undefined, maxTokens };
}
