import { BpeCounter } from './bpe-counter';
import { type EncodingName, loadRankTable } from './rank-source';

/**
 * Prompt-token estimates for limits, per model family:
 *
 * - `openai`: `o200k_base`, the tokenizer of GPT-4o / 4.1 / 5, with the chat framing of
 *   the OpenAI cookbook ("How to count tokens with tiktoken"): 3 tokens per message plus
 *   its role, 3 to prime the reply. Exact for plain messages; tool schemas are counted as
 *   their JSON text, a little above OpenAI's own rendering.
 * - `anthropic`: Claude's tokenizer is not public. `cl100k_base` x 1.1, 3 tokens per
 *   message, 3 per request, and Anthropic's documented tool-use system prompt (346 tokens
 *   for Claude 4 models) when tools are sent. The factor and overheads reproduce
 *   Anthropic's token-counting examples and recorded Claude Sonnet 4.5 usage (see the
 *   spec); newer Claude tokenizers may count up to ~35% more, hence the wider tolerance.
 * - any other family: the anthropic approximation without the tool prompt.
 *
 * The estimate only gates requests (context window, tokens per minute); real usage
 * replaces it once the answer ends.
 */
export type { EncodingName } from './rank-source';

export interface FamilyProfile {
  encoding: EncodingName;
  /** Multiplier from the encoding's count to the family's own tokenizer. */
  factor: number;
  perMessage: number;
  perRequest: number;
  /** Fixed prompt the provider adds when tools are offered. */
  toolPrompt: number;
  /** Flat estimate per image / file. */
  perAttachment: number;
  /** Stated relative tolerance of the estimate (the spec holds it to this). */
  tolerance: number;
  /**
   * The encoding is the model's own tokenizer: plain text fully tokenized counts exactly,
   * so the context-window check needs no tolerance for it.
   */
  exact: boolean;
}

export const FAMILY_PROFILES: Record<'openai' | 'anthropic' | 'other', FamilyProfile> = {
  // 765 tokens: a 1024x1024 image at high detail on GPT-4o.
  openai: {
    encoding: 'o200k_base',
    factor: 1,
    perMessage: 4,
    perRequest: 3,
    toolPrompt: 0,
    perAttachment: 765,
    tolerance: 0.1,
    exact: true,
  },
  // 1600 tokens: the ~1.15 megapixel image Anthropic scales to (w*h/750).
  anthropic: {
    encoding: 'cl100k_base',
    factor: 1.1,
    perMessage: 3,
    perRequest: 3,
    toolPrompt: 346,
    perAttachment: 1600,
    tolerance: 0.15,
    exact: false,
  },
  other: {
    encoding: 'cl100k_base',
    factor: 1.1,
    perMessage: 4,
    perRequest: 3,
    toolPrompt: 0,
    perAttachment: 1600,
    tolerance: 0.25,
    exact: false,
  },
};

export function familyProfile(family: string): FamilyProfile {
  return family === 'openai' || family === 'anthropic'
    ? FAMILY_PROFILES[family]
    : FAMILY_PROFILES.other;
}

/**
 * Text beyond this many characters is not tokenized: its count is extrapolated from the
 * part that was (tokens per character). Bounds the work of one request to ~10 ms.
 */
export const MAX_TOKENIZED_CHARS = 100_000;

const counters = new Map<EncodingName, BpeCounter>();

/** The counter for an encoding; its rank table (megabytes) is loaded once, on first use. */
export function counterFor(encoding: EncodingName): BpeCounter {
  let counter = counters.get(encoding);
  if (!counter) {
    const { patStr, table } = loadRankTable(encoding);
    counter = new BpeCounter(patStr, table);
    counters.set(encoding, counter);
  }
  return counter;
}

/** Tokens of `texts`, exact up to {@link MAX_TOKENIZED_CHARS} characters, extrapolated beyond. */
export function countTexts(
  texts: readonly string[],
  counter: BpeCounter,
  maxChars = MAX_TOKENIZED_CHARS,
): number {
  let budget = maxChars;
  let tokens = 0;
  let countedChars = 0;
  let skippedChars = 0;
  for (const text of texts) {
    if (budget <= 0) {
      skippedChars += text.length;
      continue;
    }
    const head = text.length <= budget ? text : text.slice(0, budget);
    tokens += counter.count(head);
    countedChars += head.length;
    skippedChars += text.length - head.length;
    budget -= head.length;
  }
  if (skippedChars > 0 && countedChars > 0) {
    tokens += Math.ceil((skippedChars * tokens) / countedChars);
  }
  return tokens;
}

export interface PromptShape {
  texts: readonly string[];
  messageCount: number;
  toolCount: number;
  attachmentCount: number;
}

/** Estimated prompt tokens of a request for a model of `family`. */
export function estimatePromptTokens(prompt: PromptShape, family: string): number {
  const profile = familyProfile(family);
  const textTokens = countTexts(prompt.texts, counterFor(profile.encoding));
  return (
    Math.ceil(textTokens * profile.factor) +
    prompt.messageCount * profile.perMessage +
    profile.perRequest +
    (prompt.toolCount > 0 ? profile.toolPrompt : 0) +
    prompt.attachmentCount * profile.perAttachment
  );
}

/**
 * Text up to this many characters is tokenized whole for the context-window check of a
 * family with an exact tokenizer (~50 ms per million characters); only prompts near a
 * window get there, since the cheap upper bound clears the others.
 */
export const MAX_EXACT_CHARS = 2_000_000;

/**
 * The prompt estimate the context-window check (and the context-window fallback) uses, with
 * the tolerance it may be trusted to: 0 when the family's tokenizer is exact and the prompt is
 * plain text counted whole (no tool schemas, whose rendering differs, no attachments, whose
 * cost is flat), else the family's stated tolerance.
 */
export function windowEstimate(
  prompt: PromptShape,
  family: string,
): { tokens: number; tolerance: number } {
  const profile = familyProfile(family);
  let chars = 0;
  for (const text of prompt.texts) {
    chars += text.length;
  }
  const exact =
    profile.exact &&
    prompt.toolCount === 0 &&
    prompt.attachmentCount === 0 &&
    chars <= MAX_EXACT_CHARS;
  if (!exact) {
    return { tokens: estimatePromptTokens(prompt, family), tolerance: profile.tolerance };
  }
  const textTokens = countTexts(prompt.texts, counterFor(profile.encoding), MAX_EXACT_CHARS);
  return {
    tokens: textTokens + prompt.messageCount * profile.perMessage + profile.perRequest,
    tolerance: 0,
  };
}

/**
 * {@link windowEstimate} of one prompt for any number of models: each tokenizer profile
 * counts the prompt once, however many models of its family are compared against it.
 */
export function windowEstimates(
  prompt: PromptShape,
): (family: string) => { tokens: number; tolerance: number } {
  const counted = new Map<FamilyProfile, { tokens: number; tolerance: number }>();
  return (family) => {
    const profile = familyProfile(family);
    let estimate = counted.get(profile);
    if (estimate === undefined) {
      estimate = windowEstimate(prompt, family);
      counted.set(profile, estimate);
    }
    return estimate;
  };
}

/**
 * A bound no real count exceeds: every token covers at least one UTF-8 byte and a UTF-16
 * code unit is at most 3 bytes. Lets the context check skip tokenizing ordinary prompts.
 */
export function promptTokensUpperBound(prompt: PromptShape, family: string): number {
  const profile = familyProfile(family);
  let chars = 0;
  for (const text of prompt.texts) {
    chars += text.length;
  }
  return (
    Math.ceil(chars * 3 * profile.factor) +
    prompt.messageCount * profile.perMessage +
    profile.perRequest +
    (prompt.toolCount > 0 ? profile.toolPrompt : 0) +
    prompt.attachmentCount * profile.perAttachment
  );
}

/** Loads the rank tables of these families now rather than on the first request. */
export function preloadFamilies(families: Iterable<string>): void {
  for (const family of families) {
    counterFor(familyProfile(family).encoding);
  }
}
