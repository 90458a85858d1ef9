/**
 * The canonical model: richer than any one wire format, so that nothing is lost between
 * two of them. Each inbound format decodes into CanonicalRequest; each upstream API (or
 * the embedded local model) produces CanonicalEvents; each format's encoder turns those
 * events into its exact wire grammar.
 */

export type WireFormat = 'chat_completions' | 'responses' | 'messages';

/**
 * A prompt-cache breakpoint (Anthropic `cache_control`): the prefix up to and including the
 * part that carries it may be cached. `ttl` as the client asked (`5m`, `1h`).
 */
export interface CacheMarker {
  type: 'ephemeral';
  ttl?: string;
}

export interface TextPart {
  type: 'text';
  text: string;
  cache?: CacheMarker;
}

/**
 * System text. `at`: it came in the conversation, before `messages[at]` (a mid-conversation
 * system message); absent for the leading system prompt. Targets that cannot place system
 * text inside the conversation merge it into their system prompt.
 */
export interface SystemPart extends TextPart {
  at?: number;
}

export type ImageSource =
  { kind: 'url'; url: string } | { kind: 'base64'; mediaType: string; data: string };

export interface ImagePart {
  type: 'image';
  source: ImageSource;
  detail?: string;
  cache?: CacheMarker;
}

export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** JSON text, exactly as the model produced it. */
  arguments: string;
  cache?: CacheMarker;
}

export interface ToolResultPart {
  type: 'tool_result';
  toolCallId: string;
  content: (TextPart | ImagePart)[];
  isError?: boolean;
  cache?: CacheMarker;
}

/** Reasoning carried across turns: visible text/summary plus opaque provider payloads. */
export interface ReasoningPart {
  type: 'reasoning';
  text?: string;
  summary?: string[];
  signature?: string;
  /** Opaque provider payload (Responses `encrypted_content`, Anthropic redacted data). */
  encrypted?: string;
  redacted?: boolean;
  /** The provider's id of the reasoning item (Responses `rs_...`), for round trips. */
  itemId?: string;
}

export type ContentPart = TextPart | ImagePart | ToolCallPart | ToolResultPart | ReasoningPart;

export interface CanonicalMessage {
  role: 'user' | 'assistant';
  parts: ContentPart[];
}

export interface CanonicalTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
  strict?: boolean;
  cache?: CacheMarker;
}

export type CanonicalToolChoice =
  { type: 'auto' } | { type: 'none' } | { type: 'required' } | { type: 'tool'; name: string };

/** Structured output as asked: chat `response_format`, Responses `text.format`, Messages `output_config.format`. */
export interface CanonicalResponseFormat {
  type: 'text' | 'json_object' | 'json_schema';
  name?: string;
  description?: string;
  schema?: Record<string, unknown>;
  strict?: boolean;
}

export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

export interface CanonicalRequest {
  /** Catalog model id the client asked for. */
  model: string;
  system: SystemPart[];
  messages: CanonicalMessage[];
  tools: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  parallelToolCalls?: boolean;
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stop: string[];
  stream: boolean;
  reasoning?: { effort?: ReasoningEffort; budgetTokens?: number; summary?: string };
  metadata?: Record<string, unknown>;
  /** End-user id: chat/Responses `user`, Messages `metadata.user_id`. */
  user?: string;
  /**
   * Whose prompt cache this is (the gateway key's id, set by the pipeline): part of the
   * `prompt_cache_key` the gateway derives, so that two keys never share one.
   */
  cacheScope?: string;
  responseFormat?: CanonicalResponseFormat;
  /** The inbound wire format. */
  source?: WireFormat;
  /**
   * The inbound format's own names for canonical fields (from its descriptor), so that
   * errors and the dropped-parameter list use the client's field names.
   */
  paramNames?: ParamNames;
  /** Fields of the inbound body that the canonical model does not represent. */
  extra: Record<string, unknown>;
}

/** Canonical fields whose wire name depends on the inbound format. */
export type CanonicalParam =
  | 'reasoning'
  | 'stop'
  | 'user'
  | 'responseFormat'
  | 'temperature'
  | 'topP'
  | 'metadata'
  | 'verbosity'
  | 'maxOutputTokens';

/** One wire format's names for the canonical fields. */
export type ParamNames = Readonly<Record<CanonicalParam, string>>;

export type FinishReason =
  'stop' | 'length' | 'tool_calls' | 'content_filter' | 'refusal' | 'pause' | 'error';

export interface CanonicalUsage {
  /** All input tokens, cached ones included (OpenAI semantics). */
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens?: number;
  cacheWriteInputTokens?: number;
  reasoningTokens?: number;
}

export type BlockKind =
  | { kind: 'text' }
  /** `redacted`: an opaque reasoning block (Anthropic `redacted_thinking`), no visible text. */
  | { kind: 'reasoning'; redacted?: boolean }
  | { kind: 'tool_call'; id: string; name: string };

export type CanonicalEvent =
  | { type: 'message_start'; id: string; model: string; created: number; inputTokens?: number }
  | { type: 'block_start'; index: number; block: BlockKind }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'reasoning_delta'; index: number; text: string }
  | { type: 'reasoning_signature'; index: number; signature: string }
  /**
   * Opaque reasoning payload of the block: a Responses `encrypted_content` (with the
   * reasoning item's id), or the data of a redacted block.
   */
  | { type: 'reasoning_encrypted'; index: number; data: string; itemId?: string }
  | { type: 'tool_arguments_delta'; index: number; json: string }
  | { type: 'block_stop'; index: number }
  | {
      type: 'message_stop';
      finishReason: FinishReason;
      usage: CanonicalUsage;
      /** The stop sequence that ended the answer, when one did (finish reason `stop`). */
      stopSequence?: string;
    };

export type OutputBlock =
  | { type: 'text'; text: string }
  | {
      type: 'reasoning';
      text: string;
      signature?: string;
      encrypted?: string;
      itemId?: string;
      redacted?: boolean;
    }
  | { type: 'tool_call'; id: string; name: string; arguments: string };

/** A whole, non-streamed answer: what a stream of CanonicalEvents adds up to. */
export interface CanonicalResponse {
  id: string;
  model: string;
  created: number;
  content: OutputBlock[];
  finishReason: FinishReason;
  usage: CanonicalUsage;
  stopSequence?: string;
}
