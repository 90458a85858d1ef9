/**
 * What the request limits need to know about a request, whatever its wire format. Each
 * format provides a pure extractor (body in, facts out) and opts in with
 * `@RequestLimits(extractor)`. Extractors never throw: a malformed body yields what can be
 * read, and the format's own validation reports the rest.
 */
export interface LimitFacts {
  /** Catalog model id the client named, when it named one. */
  model?: string;
  /** Requested output caps, in the order the format prefers them (value as sent). */
  maxOutput: { param: string; value: unknown }[];
  /** Name of the array the message count refers to (`messages`, `input`). */
  messagesParam: string;
  messageCount: number;
  toolCount: number;
  /** Content parts across all messages (text, image, tool call, tool result blocks...). */
  contentPartCount: number;
  /** Images, audio and files: counted at a flat estimate each, never tokenized. */
  attachmentCount: number;
  stream: boolean;
  /**
   * True when the request is translated for a model of another format, whose output limit
   * the client could not know: a larger cap is lowered to the model's (by the translator,
   * and listed) instead of refused.
   */
  clampMaxOutput?: boolean;
  /** True when the request generates nothing, so token limits do not apply. */
  tokenFree?: boolean;
  /**
   * True when the provider may read input the gateway cannot count: conversation state it
   * stores, encrypted reasoning, results of its built-in tools (web search...). A budget
   * then reserves the model's whole context window for the prompt.
   */
  uncountedInput?: boolean;
  /**
   * True when the answer is made after the response (Responses `background: true`): its
   * cost arrives where the gateway never sees it, so a budget cannot hold it.
   */
  detached?: boolean;
  /** Every piece of prompt text the model reads: instructions, messages, tool schemas. */
  texts: string[];
}

/** Reads the facts of a request from its body (and, for GET routes, its query). */
export type LimitsExtractor = (body: unknown, query: Record<string, unknown>) => LimitFacts;

/** Facts of a body that is not even an object (validation rejects it later). */
export function emptyFacts(messagesParam: string): LimitFacts {
  return {
    maxOutput: [],
    messagesParam,
    messageCount: 0,
    toolCount: 0,
    contentPartCount: 0,
    attachmentCount: 0,
    stream: false,
    texts: [],
  };
}
