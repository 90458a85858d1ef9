import { createHash, randomBytes } from 'node:crypto';
import { setOwn } from '../../../common/own';
import type {
  CanonicalRequest,
  CanonicalTool,
  ContentPart,
  FinishReason,
  ReasoningEffort,
} from '../../../core/canonical';
import { schemaInstance } from './schema-instance';
import { escapeRegExp } from '../../../common/regexp';

/**
 * The embedded local model's behaviour, as a pure function of the request: what it will
 * think, say and call. Deterministic, so tests and client integrations can rely on it:
 *
 * - reply text: `Echo: <the last user message's text>`; after a tool result:
 *   `Tool <name> returned: <result text>`;
 * - reasoning (when `reasoning.effort` is set and not `none`, or a thinking budget is
 *   given): one to five fixed sentences describing the plan, more for higher effort;
 * - tool call: when tools are offered and `tool_choice` forces one, or the last user
 *   message names a tool; arguments come from `key=value` pairs in the message, else the
 *   schema's `default`, else a typed placeholder (strings get the message text);
 * - `max_tokens` truncates (finish reason `length`); stop sequences cut the text.
 */
export interface LocalPlan {
  reasoning: string[];
  /** Deterministic signature over the reasoning text (Anthropic-family round trips). */
  signature?: string;
  text: string[];
  toolCalls: { id: string; name: string; arguments: string[] }[];
  finishReason: FinishReason;
  /** The stop sequence that cut the text, if any. */
  stopSequence?: string;
  inputTokens: number;
  outputTokens: number;
}

const EFFORT_SENTENCES: Record<ReasoningEffort, number> = {
  none: 0,
  minimal: 1,
  low: 2,
  medium: 3,
  high: 4,
  xhigh: 5,
  max: 5,
};

/** Splits text into token-like pieces: words with their leading whitespace. */
export function tokenize(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

function textOf(parts: ContentPart[]): string {
  return parts
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join('')
    .trim();
}

function countInputTokens(req: CanonicalRequest): number {
  let total = 0;
  for (const part of req.system) {
    total += estimateTokens(part.text);
  }
  for (const message of req.messages) {
    total += 4;
    for (const part of message.parts) {
      switch (part.type) {
        case 'text':
          total += estimateTokens(part.text);
          break;
        case 'tool_call':
          total += estimateTokens(part.name + part.arguments);
          break;
        case 'tool_result':
          total += estimateTokens(textOf(part.content));
          break;
        case 'reasoning':
          total += estimateTokens(part.text ?? '');
          break;
        case 'image':
          total += 85;
          break;
      }
    }
  }
  for (const tool of req.tools) {
    total += estimateTokens(tool.name + (tool.description ?? '') + JSON.stringify(tool.parameters));
  }
  return Math.max(total, 1);
}

function placeholder(schema: Record<string, unknown>, text: string): unknown {
  if ('default' in schema) {
    return schema.default;
  }
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum[0];
  }
  switch (schema.type) {
    case 'integer':
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return text;
  }
}

function coerce(value: string, schema: Record<string, unknown>): unknown {
  if (schema.type === 'integer' || schema.type === 'number') {
    const n = Number(value);
    return Number.isFinite(n) ? n : value;
  }
  if (schema.type === 'boolean') {
    return value === 'true';
  }
  return value;
}

/** Builds call arguments from `key=value` pairs in the text and the tool's schema. */
export function buildArguments(tool: CanonicalTool, text: string): Record<string, unknown> {
  const properties = (tool.parameters.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set((tool.parameters.required as string[] | undefined) ?? []);
  const args = valuesInText(tool.parameters, text);
  for (const [name, schema] of Object.entries(properties)) {
    if (!Object.hasOwn(args, name) && (required.has(name) || 'default' in schema)) {
      setOwn(args, name, placeholder(schema, text));
    }
  }
  return args;
}

/** The object schema's properties that the text gives as `key=value` (or `key: value`). */
function valuesInText(
  objectSchema: Record<string, unknown>,
  text: string,
): Record<string, unknown> {
  const properties = (objectSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const escaped = escapeRegExp(name);
    const match = new RegExp(`\\b${escaped}\\s*[=:]\\s*("([^"]*)"|[^\\s,;]+)`).exec(text);
    if (match) {
      setOwn(values, name, coerce(match[2] ?? match[1], schema));
    }
  }
  return values;
}

/** A structured-output answer: valid for the schema, with the values the text names. */
function structuredAnswer(schema: Record<string, unknown>, text: string): string {
  const value = schemaInstance(schema, text);
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    for (const [name, named] of Object.entries(valuesInText(schema, text))) {
      setOwn(value as Record<string, unknown>, name, named);
    }
  }
  return JSON.stringify(value);
}

function chooseTool(req: CanonicalRequest, userText: string): CanonicalTool | undefined {
  if (req.tools.length === 0 || req.toolChoice?.type === 'none') {
    return undefined;
  }
  if (req.toolChoice?.type === 'tool') {
    const name = req.toolChoice.name;
    return req.tools.find((t) => t.name === name);
  }
  const named = req.tools.find((t) => userText.includes(t.name));
  if (named) {
    return named;
  }
  return req.toolChoice?.type === 'required' ? req.tools[0] : undefined;
}

function reasoningSentences(
  req: CanonicalRequest,
  userText: string,
  tool: CanonicalTool | undefined,
): string[] {
  const effort = req.reasoning?.effort ?? (req.reasoning?.budgetTokens ? 'medium' : 'none');
  const count = EFFORT_SENTENCES[effort];
  const words = userText.split(/\s+/).filter(Boolean).length;
  const all = [
    `The user sent a message of ${words} word${words === 1 ? '' : 's'}.`,
    tool
      ? ` The right move is to call the ${tool.name} tool.`
      : ' The right move is to echo it back.',
    ` ${req.tools.length} tool${req.tools.length === 1 ? ' is' : 's are'} on offer.`,
    ' The answer must be deterministic, so no sampling is involved.',
    ' Nothing else needs checking before answering.',
  ];
  return all.slice(0, count);
}

function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

/** Plans the whole answer to `req`. */
export function planLocalAnswer(req: CanonicalRequest): LocalPlan {
  const last = req.messages[req.messages.length - 1];
  const toolResult = last?.parts.find((p) => p.type === 'tool_result');
  const userText = last ? textOf(last.parts) : '';

  let replyText: string;
  let tool: CanonicalTool | undefined;
  if (toolResult && toolResult.type === 'tool_result') {
    const call = req.messages
      .flatMap((m) => m.parts)
      .find((p) => p.type === 'tool_call' && p.id === toolResult.toolCallId);
    const name = call?.type === 'tool_call' ? call.name : 'tool';
    replyText = `Tool ${name} returned: ${textOf(toolResult.content)}`;
  } else {
    tool = chooseTool(req, userText);
    replyText = userText ? `Echo: ${userText}` : 'Hello from the local model.';
  }
  const format = req.responseFormat;
  if (!tool && format?.type === 'json_schema' && format.schema !== undefined) {
    replyText = structuredAnswer(format.schema, userText);
  } else if (!tool && format?.type === 'json_object') {
    replyText = JSON.stringify({ echo: userText });
  }

  const reasoningText = reasoningSentences(req, userText, tool).join('');
  const maxTokens = req.maxOutputTokens ?? Number.MAX_SAFE_INTEGER;
  let reasoning = tokenize(reasoningText);
  let finishReason: FinishReason = 'stop';
  if (reasoning.length >= maxTokens) {
    // Thinking alone used up the budget: no answer, as a real model would stop.
    reasoning = reasoning.slice(0, maxTokens);
    tool = undefined;
    replyText = '';
    finishReason = 'length';
  }
  let budget = maxTokens - reasoning.length;
  let text: string[] = [];
  const toolCalls: LocalPlan['toolCalls'] = [];
  let stopSequence: string | undefined;

  if (tool) {
    const args = JSON.stringify(buildArguments(tool, userText));
    // Stream the arguments in a few fragments, the way real models do.
    const pieces = args.match(/.{1,12}/gsu) ?? [args];
    toolCalls.push({ id: newId('call_'), name: tool.name, arguments: pieces });
    budget -= pieces.length;
    finishReason = 'tool_calls';
  } else {
    for (const stop of req.stop) {
      const at = replyText.indexOf(stop);
      if (at >= 0) {
        // Each cut shortens the text, so the last match is the earliest one.
        replyText = replyText.slice(0, at);
        stopSequence = stop;
      }
    }
    text = tokenize(replyText);
    if (text.length > Math.max(budget, 0)) {
      text = text.slice(0, Math.max(budget, 0));
      finishReason = 'length';
    }
  }
  const outputTokens =
    reasoning.length + text.length + toolCalls.reduce((n, c) => n + c.arguments.length, 0);
  return {
    reasoning,
    signature: reasoning.length
      ? createHash('sha256')
          .update(`local-thinking:${reasoning.join('')}`)
          .digest('base64')
      : undefined,
    text,
    toolCalls,
    finishReason,
    stopSequence: finishReason === 'stop' ? stopSequence : undefined,
    inputTokens: countInputTokens(req),
    outputTokens,
  };
}

export { newId as localId };
