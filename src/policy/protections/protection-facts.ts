import type { PartSource } from './prompt-injection/detector';
import { asArray, isRecord } from '../../common/json-read';

export const PROMPT_INJECTION_TOOL = 'prompt_injection_protection';
export const SYSTEM_PROMPT_FILTER_TOOL = 'system_prompt_filter';
export const SHADOW_AGENT_TOOL = 'shadow_agent_validation';

/** A protection tool found in the request's `tools`. */
export interface ProtectionTool {
  name: string;
  /** The array it is in: `tools`, or chat's legacy `functions`. */
  field?: 'tools' | 'functions';
  /** Index in that array. */
  index: number;
  /** Path of its parameter schema, for error messages (`tools[2].function.parameters`). */
  schemaParam: string;
  schema: unknown;
  /** The tool's description (policy text for the shadow agent), and its path. */
  description?: unknown;
  descriptionParam?: string;
}

/** A piece of the request to scan, with where it is (never its text in any message). */
export interface LabeledPart {
  source: PartSource;
  text: string;
  /** `messages[3]`, `input[1] (function_call_output)`, `messages[2].content[0] (tool result)` */
  where: string;
}

/**
 * What one wire format exposes to the protections. Pure functions over the raw
 * (unvalidated) body: they accept anything and never throw, like the limits extractors.
 */
export interface ProtectionExtractor {
  /** Protection tools (by name) among `tools`. */
  tools(body: unknown, names: readonly string[]): ProtectionTool[];
  /** The function names `tool_choice` names, if any. */
  toolChoiceNames(body: unknown): string[];
  /** User turns and indirect content (tool results, documents), in request order. */
  parts(body: unknown): LabeledPart[];
}

/** Text of a string or of the `text` fields of a block array (joined by newlines). */
export function textOf(content: unknown, types?: readonly string[]): string {
  if (typeof content === 'string') {
    return content;
  }
  const texts: string[] = [];
  for (const block of asArray(content)) {
    if (
      isRecord(block) &&
      typeof block.text === 'string' &&
      (types === undefined || block.type === undefined || types.includes(block.type as string))
    ) {
      texts.push(block.text);
    }
  }
  return texts.join('\n');
}

/** Pushes a part when it has text. */
export function pushPart(
  parts: LabeledPart[],
  source: PartSource,
  text: string,
  where: string,
): void {
  if (text.trim() !== '') {
    parts.push({ source, text, where });
  }
}

/**
 * The body without the protection tools, as a new shallow copy (the client's body is never
 * changed), or undefined when it has none. The client's other tools and its `tool_choice`
 * stay; when no tool remains, `tools` and `tool_choice` go too (a `tool_choice` of
 * "auto"/"required"/"any" without tools is an upstream 400), and likewise chat's legacy
 * `functions` and `function_call`.
 */
export function withoutProtectionTools(
  body: unknown,
  found: readonly ProtectionTool[],
): Record<string, unknown> | undefined {
  if (!isRecord(body) || found.length === 0) {
    return undefined;
  }
  let out: Record<string, unknown> | undefined;
  for (const field of ['tools', 'functions'] as const) {
    const list = body[field];
    const drop = new Set(found.filter((t) => (t.field ?? 'tools') === field).map((t) => t.index));
    if (drop.size === 0 || !Array.isArray(list)) {
      continue;
    }
    out ??= { ...body };
    const kept = list.filter((_t, i) => !drop.has(i));
    if (kept.length > 0) {
      out[field] = kept;
    } else if (field === 'tools') {
      delete out.tools;
      delete out.tool_choice;
      delete out.parallel_tool_calls;
    } else {
      delete out.functions;
      delete out.function_call;
    }
  }
  return out;
}
