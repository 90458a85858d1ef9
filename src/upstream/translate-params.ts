import { createHash } from 'node:crypto';
import { InvalidRequestError } from '../common/errors/gateway-errors';
import { own, setOwn } from '../common/own';
import type {
  CacheMarker,
  CanonicalParam,
  CanonicalRequest,
  ParamNames,
  ReasoningEffort,
} from '../core/canonical';

/** An upstream request body built from a canonical request, and what it had to leave out. */
export interface TranslatedRequest {
  body: Record<string, unknown>;
  /** Client fields the target cannot honour and that were dropped (listed in a header). */
  dropped: string[];
}

export type { CanonicalParam } from '../core/canonical';

/**
 * Names for a request that no wire format decoded (a protection's own model call): the
 * canonical fields as Chat Completions spells them. A decoded request carries its format's
 * own names (`paramNames`, from the format's descriptor).
 */
const UNNAMED: ParamNames = {
  reasoning: 'reasoning_effort',
  stop: 'stop',
  user: 'user',
  responseFormat: 'response_format',
  temperature: 'temperature',
  topP: 'top_p',
  metadata: 'metadata',
  verbosity: 'verbosity',
  maxOutputTokens: 'max_completion_tokens',
};

/** The client's own name for a canonical field, for errors and the dropped-params header. */
export function paramName(req: CanonicalRequest, param: CanonicalParam): string {
  return (req.paramNames ?? UNNAMED)[param];
}

export function rejectParam(name: string, target: string, why = ''): never {
  throw new InvalidRequestError(
    `'${name}' is not supported for this model: its upstream (${target}) cannot honour it${why}, and dropping it would change the answer.`,
    name,
    'unsupported_parameter',
  );
}

/**
 * How a target treats the fields a canonical request keeps in `extra` (inbound fields
 * with no canonical meaning). Names are the inbound wire names; no two formats use one
 * name for different things, so one table per target covers every inbound format.
 * - `forward`: sent as they are;
 * - `ignore`: meaningless for the target and without effect on the answer (not listed);
 * - `reject`: a predicate on the value; true means 400 (dropping would change the answer);
 * - anything else is dropped and listed.
 * Null, undefined and `false` values are ignored: they ask for nothing.
 */
export interface ExtraPolicy {
  target: string;
  forward?: ReadonlySet<string>;
  ignore: ReadonlySet<string>;
  reject: Readonly<Record<string, (value: unknown) => boolean>>;
}

/** Applies an ExtraPolicy: returns the forwarded fields, records the dropped ones. */
export function applyExtraPolicy(
  extra: Record<string, unknown>,
  policy: ExtraPolicy,
  dropped: string[],
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined || value === null || value === false) {
      continue;
    }
    const reject = own(policy.reject, key);
    if (reject?.(value)) {
      rejectParam(key, policy.target);
    }
    if (policy.forward?.has(key)) {
      setOwn(forwarded, key, value);
    } else if (!policy.ignore.has(key) && !reject) {
      dropped.push(key);
    }
  }
  return forwarded;
}

/** Rejections shared by every non-OpenAI-chat target: several choices, token logprobs, audio. */
export const CHAT_ONLY_REJECTS: Record<string, (value: unknown) => boolean> = {
  n: (v) => typeof v === 'number' && v > 1,
  logprobs: (v) => v === true,
  top_logprobs: (v) => typeof v === 'number' && v > 0,
  audio: () => true,
  modalities: (v) => Array.isArray(v) && v.some((m) => m !== 'text'),
  web_search_options: () => true,
};

/** Effort <-> thinking budget (Anthropic `budget_tokens`), both ways. */
const BUDGETS: Record<Exclude<ReasoningEffort, 'none'>, number> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32768,
};

export function budgetForEffort(effort: Exclude<ReasoningEffort, 'none'>): number {
  return BUDGETS[effort];
}

/** The effort closest to a thinking budget (for OpenAI targets), never `none`. */
export function effortForBudget(budget: number): 'minimal' | 'low' | 'medium' | 'high' {
  if (budget <= 1024) {
    return 'minimal';
  }
  if (budget <= 4096) {
    return 'low';
  }
  if (budget <= 12288) {
    return 'medium';
  }
  return 'high';
}

/**
 * The OpenAI effort for a canonical reasoning request: the effort itself (`max` becomes
 * `xhigh`, the highest OpenAI knows), else derived from a budget; undefined when none asked.
 */
export function openAiEffort(reasoning: CanonicalRequest['reasoning']): string | undefined {
  if (reasoning?.effort !== undefined) {
    return reasoning.effort === 'max' ? 'xhigh' : reasoning.effort;
  }
  if (reasoning?.budgetTokens !== undefined) {
    return effortForBudget(reasoning.budgetTokens);
  }
  return undefined;
}

/**
 * Takes the containers of structured output out of `extra` (chat `verbosity`, Responses
 * `text`, Messages `output_config`): their `format` and `effort` are canonical already,
 * `keep` names sub-fields the target carries itself, any other sub-field is listed as
 * dropped. Returns the `verbosity` asked for, if any.
 */
export function takeOutputConfigs(
  extra: Record<string, unknown>,
  dropped: string[],
  keep: readonly string[] = [],
): string | undefined {
  let verbosity: string | undefined;
  for (const key of ['text', 'output_config'] as const) {
    const value = extra[key] as Record<string, unknown> | null | undefined;
    delete extra[key];
    if (typeof value?.verbosity === 'string') {
      verbosity = value.verbosity;
    }
    const known = ['format', 'effort', ...keep];
    if (value && Object.keys(value).some((k) => !known.includes(k))) {
      dropped.push(key);
    }
  }
  if (typeof extra.verbosity === 'string') {
    verbosity = extra.verbosity;
    delete extra.verbosity;
  }
  return verbosity;
}

/** OpenAI `tool_choice` (both APIs); `named` renders a forced tool in the API's shape. */
export function openAiToolChoice(req: CanonicalRequest, named: (name: string) => unknown): unknown {
  switch (req.toolChoice?.type) {
    case 'auto':
    case 'none':
    case 'required':
      return req.toolChoice.type;
    case 'tool':
      return named(req.toolChoice.name);
    case undefined:
      return undefined;
  }
}

/**
 * The output cap sent upstream: the client's, but at most the model's limit. A client of
 * another format cannot know this model's limit (Claude Code asks every model it does not
 * know for 32000 tokens), so a larger cap is lowered and listed rather than refused.
 */
export function clampedMaxOutput(
  req: CanonicalRequest,
  limit: number,
  dropped: string[],
): number | undefined {
  const asked = req.maxOutputTokens;
  if (asked !== undefined && asked > limit) {
    dropped.push(paramName(req, 'maxOutputTokens'));
    return limit;
  }
  return asked;
}

/** A bounded, stable pseudonym of client-sent identifiers: never the raw text upstream. */
export function hashedId(...parts: string[]): string {
  return `gw-${createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 32)}`;
}

/** Every prompt-cache breakpoint the request carries (system, tools, message parts). */
export function cacheMarkers(req: CanonicalRequest): CacheMarker[] {
  const out: CacheMarker[] = [];
  for (const part of req.system) {
    if (part.cache) {
      out.push(part.cache);
    }
  }
  for (const tool of req.tools) {
    if (tool.cache) {
      out.push(tool.cache);
    }
  }
  for (const m of req.messages) {
    for (const part of m.parts) {
      if (part.type !== 'reasoning' && part.cache) {
        out.push(part.cache);
      }
    }
  }
  return out;
}

/**
 * Prompt caching on an OpenAI target, which caches every long prefix by itself and routes
 * by `prompt_cache_key`. Anthropic breakpoints (`cache_control` on blocks, or top-level for
 * automatic caching) cannot be placed there: they are listed as dropped and become a
 * `prompt_cache_key` stable per gateway key, end user and stable prefix (system prompt and
 * tools), so the turns of one agent session reach the same cache. Claude Code's
 * `metadata.user_id` becomes `safety_identifier`, hashed. A client's own keys win.
 */
export function openAiCacheFields(
  req: CanonicalRequest,
  extra: Record<string, unknown>,
  dropped: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const topLevel = extra.cache_control;
  delete extra.cache_control;
  const marked = cacheMarkers(req).length > 0 || (topLevel !== undefined && topLevel !== null);
  if (marked) {
    dropped.push('cache_control');
  }
  const fromMessages = req.source === 'messages' && req.user !== undefined;
  if ((marked || fromMessages) && extra.prompt_cache_key === undefined) {
    const tools = req.tools.map((t) => [t.name, t.description ?? '', t.parameters]);
    out.prompt_cache_key = hashedId(
      req.cacheScope ?? '',
      req.user ?? '',
      JSON.stringify([req.system.filter((p) => p.at === undefined).map((p) => p.text), tools]),
    );
  }
  if (fromMessages && extra.safety_identifier === undefined) {
    out.safety_identifier = hashedId(req.user ?? '');
  }
  return out;
}
