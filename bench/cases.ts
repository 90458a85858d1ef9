/** The measured cases: one entry per stream (STREAM_CASES) and per non-streamed request (LATENCY_CASES). */
import { JUDGE_MODEL } from './fake-upstream';
import {
  ANTHROPIC_HEADERS,
  type ChatExtras,
  HEADERS,
  LONG_SYSTEM_PROMPT,
  chatBody,
  messagesBody,
  protectionTool,
  responsesStreamBody,
} from './bodies';
import {
  checkChatStream,
  checkCompletion,
  checkMessage,
  checkMessagesStream,
  checkResponsesStream,
  isChatContent,
  isMessagesContent,
  isResponsesContent,
} from './client';
import {
  BURST,
  CHAT_PATH,
  MESSAGES_MODEL,
  MODEL,
  RESPONSES_API_MODEL,
  RESPONSES_MODEL,
  type Sampling,
} from './settings';

/** One SSE event as a client decodes it (blank-line terminated). */
export interface SseEvent {
  /** The `event:` line, when there was one. */
  event?: string;
  /** The `data:` lines, joined with newlines. */
  data: string;
  /** `data` parsed; undefined for `[DONE]` and for data that is not a JSON object. */
  json?: Record<string, any>;
  /** `data` is neither `[DONE]` nor a JSON object (a broken relay would show up here). */
  malformed: boolean;
}

/** How one side of a stream case is requested and read. */
export interface StreamRequest {
  path: string;
  body: string;
  headers: Record<string, string>;
  /** The event that stops the TTFT clock, for the row's title. */
  contentEventLabel: string;
  /** True for an event that carries content: the first one stops the TTFT clock. */
  isContentEvent(e: SseEvent): boolean;
  /** What is wrong with a whole stream (its events in order), or undefined. */
  check(events: SseEvent[]): string | undefined;
  /**
   * Protected requests: the verdicts the final `x-gateway-protections` must hold (the
   * trailer of a stream, else the header), e.g. `system_prompt_filter=pass`. A missing
   * one means the protection did not run, or did not pass: the row would not measure it.
   */
  protections?: string[];
}

export interface StreamCase extends StreamRequest {
  /** Row label, and key of the case in the JSON results. */
  name: string;
  /**
   * The direct call, when it differs from the gateway call: a translated path's baseline
   * is the upstream's own API, in its own format. Unset: both send the same request.
   */
  direct?: StreamRequest;
  /**
   * A protected case: the same request without the protection tool, sent to the gateway
   * too, in the same rounds (direct, unprotected, protected, direct, ...), so that what the
   * protection adds is a paired difference of two gateway requests that differ only by it.
   */
  unprotected?: StreamRequest;
  /** Which of the variant's `streamPairs` counts to use. */
  sampling: Sampling;
  /** Length of the case's warm-up burst, in seconds. */
  burstS: number;
}

/**
 * A streamed chat request for `model`. By default without stream_options: the gateway
 * then asks the upstream for usage itself and strips the usage chunk on the way back, its
 * more expensive (and common) streaming path. `usageExpected`: the body asks for usage, as
 * the gateway's own chat upstream calls do, so the stream must end with the usage chunk.
 */
export function chatStreamRequest(
  model: string,
  usageExpected = false,
  extras: ChatExtras = {},
  protections?: string[],
): StreamRequest {
  return {
    path: CHAT_PATH,
    body: chatBody(model, true, usageExpected, extras),
    headers: HEADERS,
    contentEventLabel: 'first chunk with delta.content',
    isContentEvent: isChatContent,
    check: (events) => checkChatStream(events, model, usageExpected),
    protections,
  };
}

export function responsesStreamRequest(model: string): StreamRequest {
  return {
    path: '/v1/responses',
    body: responsesStreamBody(model),
    headers: HEADERS,
    contentEventLabel: 'first response.output_text.delta',
    isContentEvent: isResponsesContent,
    check: (events) => checkResponsesStream(events, model),
  };
}

export function messagesStreamRequest(model: string): StreamRequest {
  return {
    path: '/v1/messages',
    body: messagesBody(model, true),
    headers: ANTHROPIC_HEADERS,
    contentEventLabel: 'first content_block_delta',
    isContentEvent: isMessagesContent,
    check: (events) => checkMessagesStream(events, model),
  };
}

/** One protection as a request turns it on, and the verdict it must end with. */
export interface ProtectionSpec {
  tool: Record<string, unknown>;
  verdict: string;
}

/**
 * The protections measured end to end, each alone, with default settings (block mode):
 * `system_prompt_filter` (the canonical path, the leak filter on the answer),
 * `prompt_injection_protection` (the local detector on the user turn, then the fast path)
 * and `shadow_agent_validation` (the canonical path, the whole answer held until a judge
 * model, JUDGE_MODEL on the fake upstream, allows it).
 */
export const PROTECTIONS: Record<'filter' | 'injection' | 'shadow', ProtectionSpec> = {
  filter: {
    tool: protectionTool('system_prompt_filter'),
    verdict: 'system_prompt_filter=pass',
  },
  injection: {
    tool: protectionTool('prompt_injection_protection'),
    verdict: 'prompt_injection_protection=pass',
  },
  shadow: {
    tool: protectionTool(
      'shadow_agent_validation',
      { model: { type: 'string', default: JUDGE_MODEL } },
      'Block an answer that promises a refund amount or quotes the internal notes.',
    ),
    verdict: 'shadow_agent_validation=pass',
  },
};

/**
 * The chat conversation with the long system prompt and one protection. The same
 * conversation without the tool is both its direct call (a client calling the upstream
 * itself has no protection) and its `unprotected` gateway request (the chat fast path).
 */
export function protectedStreamCase(name: string, p: ProtectionSpec): StreamCase {
  const plain = chatStreamRequest(MODEL, false, { system: LONG_SYSTEM_PROMPT });
  return {
    name,
    ...chatStreamRequest(MODEL, false, { system: LONG_SYSTEM_PROMPT, tools: [p.tool] }, [
      p.verdict,
    ]),
    direct: plain,
    unprotected: plain,
    sampling: 'short',
    burstS: BURST.extraStreamS,
  };
}

/**
 * The streams measured, each direct vs gateway at concurrency 1 (measureStreams): first
 * the same-format fast paths, then the translated paths (`<client format>-><upstream
 * API>`), whose `direct` request is the same conversation in the upstream's own API, as
 * the upstream would be called without the gateway, then the protected cases
 * (`chat+<protection>`, see protectedStreamCase). A new case is one more entry here, plus
 * its model in writeCatalog when it needs one.
 */
export const STREAM_CASES: StreamCase[] = [
  { name: 'chat', ...chatStreamRequest(MODEL), sampling: 'full', burstS: BURST.durationS },
  {
    name: 'responses',
    ...responsesStreamRequest(RESPONSES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  {
    name: 'messages',
    ...messagesStreamRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Chat client, Claude model: translated to the Anthropic Messages API.
  {
    name: 'chat->messages',
    ...chatStreamRequest(MESSAGES_MODEL),
    direct: messagesStreamRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Messages client, chat model: translated to Chat Completions, which the gateway always
  // asks for the usage chunk; the direct call asks for it too, to get the same stream.
  {
    name: 'messages->chat',
    ...messagesStreamRequest(MODEL),
    direct: chatStreamRequest(MODEL, true),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Chat client, `upstream_api: responses` model: translated to the Responses API.
  {
    name: 'chat->responses',
    ...chatStreamRequest(RESPONSES_API_MODEL),
    direct: responsesStreamRequest(RESPONSES_API_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Protections on the chat stream, each also sent without its tool, in the same rounds.
  protectedStreamCase('chat+filter', PROTECTIONS.filter),
  protectedStreamCase('chat+injection', PROTECTIONS.injection),
  protectedStreamCase('chat+shadow', PROTECTIONS.shadow),
];

// ---------------------------------------------------------------------------------------
// Latency cases: one entry per measured non-streamed request (see measureLatencies)
// ---------------------------------------------------------------------------------------

/** How one side of a non-streamed case is requested and checked. */
export interface CompletionRequest {
  path: string;
  body: string;
  headers: Record<string, string>;
  /** What is wrong with the answer's body, or undefined. */
  check(text: string): string | undefined;
  /** As StreamRequest.protections (read from the header). */
  protections?: string[];
}

export interface LatencyCase extends CompletionRequest {
  /** Row label, and key of the case in the JSON results. */
  name: string;
  /** As StreamCase.direct: the upstream's own API on a translated path. */
  direct?: CompletionRequest;
  /** As StreamCase.unprotected. */
  unprotected?: CompletionRequest;
  /** `full`: the variant's latencyWarmupPairs/latencyPairs; `short`: shortLatencyPairs. */
  sampling: Sampling;
  /** Length of the case's warm-up burst, in seconds. */
  burstS: number;
}

export function chatCompletionRequest(
  model: string,
  extras: ChatExtras = {},
  protections?: string[],
): CompletionRequest {
  return {
    path: CHAT_PATH,
    body: chatBody(model, false, false, extras),
    headers: HEADERS,
    check: (text) => checkCompletion(text, model),
    protections,
  };
}

/** As protectedStreamCase, not streamed. */
export function protectedLatencyCase(name: string, p: ProtectionSpec): LatencyCase {
  const plain = chatCompletionRequest(MODEL, { system: LONG_SYSTEM_PROMPT });
  return {
    name,
    ...chatCompletionRequest(MODEL, { system: LONG_SYSTEM_PROMPT, tools: [p.tool] }, [p.verdict]),
    direct: plain,
    unprotected: plain,
    sampling: 'short',
    burstS: BURST.extraStreamS,
  };
}

export function messageRequest(model: string): CompletionRequest {
  return {
    path: '/v1/messages',
    body: messagesBody(model, false),
    headers: ANTHROPIC_HEADERS,
    check: (text) => checkMessage(text, model),
  };
}

export const LATENCY_CASES: LatencyCase[] = [
  { name: 'chat', ...chatCompletionRequest(MODEL), sampling: 'full', burstS: BURST.durationS },
  // Chat client, Claude model: translated to the Anthropic Messages API.
  {
    name: 'chat->messages',
    ...chatCompletionRequest(MESSAGES_MODEL),
    direct: messageRequest(MESSAGES_MODEL),
    sampling: 'short',
    burstS: BURST.extraStreamS,
  },
  // Protections on the non-streamed chat answer, likewise.
  protectedLatencyCase('chat+filter', PROTECTIONS.filter),
  protectedLatencyCase('chat+injection', PROTECTIONS.injection),
];
