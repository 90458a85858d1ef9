import type { CatalogModel } from '../../../catalog/catalog.types';
import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import { own } from '../../../common/own';
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  ContentPart,
  ImagePart,
  TextPart,
} from '../../../core/canonical';
import { toolInput } from '../../../core/tool-arguments';
import {
  CHAT_ONLY_REJECTS,
  type ExtraPolicy,
  type TranslatedRequest,
  applyExtraPolicy,
  budgetForEffort,
  clampedMaxOutput,
  paramName,
  takeOutputConfigs,
} from '../../translate-params';
import { JSON_OBJECT_INSTRUCTION, alternatingTurns, fitThinking } from '../anthropic/to-anthropic';
import { isClaudeSignature } from '../gemini/gemini.wire';

type Json = Record<string, unknown>;

const POLICY: ExtraPolicy = {
  target: 'Amazon Bedrock Converse',
  // Claude's own sampling field; Converse carries it in additionalModelRequestFields.
  forward: new Set(['top_k']),
  ignore: new Set(['stream_options', 'include', 'store', 'service_tier', 'prompt_cache_key']),
  reject: { ...CHAT_ONLY_REJECTS, background: (v) => v === true },
};

/** The image formats Converse takes, by media type. */
const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** What an empty tool result says: Converse takes no empty result. */
export const EMPTY_RESULT = '(no output)';

/** Claude on Bedrock: model ids and inference profiles name the `anthropic.claude` family. */
export function isClaude(model: CatalogModel): boolean {
  return model.family === 'anthropic' || model.upstreamId.includes('anthropic.');
}

/**
 * An image as Converse wants it: bytes (base64 in JSON) of a known format. Bedrock fetches
 * no URLs, so only data URLs and base64 images can travel: anything else is a 400.
 */
function image(part: ImagePart): Json {
  let mediaType: string;
  let data: string;
  if (part.source.kind === 'base64') {
    ({ mediaType, data } = part.source);
  } else {
    const inline = /^data:([^;,]+);base64,(.*)$/s.exec(part.source.url);
    if (!inline) {
      throw new InvalidRequestError(
        'Amazon Bedrock takes images as bytes only: send the image as a base64 data URL, not a link.',
        'messages',
        'unsupported_parameter',
      );
    }
    [, mediaType, data] = inline;
  }
  const format = own(IMAGE_FORMATS, mediaType.toLowerCase());
  if (format === undefined) {
    throw new InvalidRequestError(
      `Amazon Bedrock takes png, jpeg, gif and webp images, not '${mediaType}'.`,
      'messages',
      'unsupported_parameter',
    );
  }
  return { image: { format, source: { bytes: data } } };
}

function simpleBlocks(parts: (TextPart | ImagePart)[]): Json[] {
  return parts
    .filter((p) => p.type === 'image' || p.text !== '')
    .map((p) => (p.type === 'text' ? { text: p.text } : image(p)));
}

/** One canonical part as a Converse content block; undefined when it cannot travel. */
function block(part: ContentPart): Json | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : { text: part.text };
    case 'image':
      return image(part);
    case 'tool_call':
      return { toolUse: { toolUseId: part.id, name: part.name, input: toolInput(part.arguments) } };
    case 'tool_result': {
      const content = simpleBlocks(part.content);
      return {
        toolResult: {
          toolUseId: part.toolCallId,
          // Converse refuses an empty result and an empty text block alike.
          content: content.length > 0 ? content : [{ text: EMPTY_RESULT }],
          status: part.isError ? 'error' : 'success',
        },
      };
    }
    case 'reasoning':
      // Only signed Claude reasoning (or its redacted form) goes back; a Gemini
      // signature or an OpenAI payload means nothing here.
      if (part.redacted && part.encrypted !== undefined) {
        return { reasoningContent: { redactedContent: part.encrypted } };
      }
      if (isClaudeSignature(part.signature)) {
        return {
          reasoningContent: {
            reasoningText: {
              text: part.text ?? (part.summary ?? []).join('\n\n'),
              signature: part.signature,
            },
          },
        };
      }
      return undefined;
  }
}

/** Converse messages: alternating as Claude's, tool results and then reasoning leading. */
function messages(input: CanonicalMessage[]): Json[] {
  return alternatingTurns(input, block, (role, b) =>
    role === 'user' ? 'toolResult' in b : 'reasoningContent' in b,
  );
}

/**
 * Converse refuses tool calls and results in the history of a request that declares no
 * tools: the tools those calls name are declared then, with an open schema.
 */
function toolsOfHistory(history: CanonicalMessage[]): CanonicalTool[] {
  const names = new Set<string>();
  for (const m of history) {
    for (const part of m.parts) {
      if (part.type === 'tool_call') {
        names.add(part.name);
      }
    }
  }
  return [...names].map((name) => ({ name, parameters: { type: 'object' } }));
}

function requestedBudget(req: CanonicalRequest): number | undefined {
  const r = req.reasoning;
  if (r?.budgetTokens !== undefined) {
    return r.budgetTokens;
  }
  return r?.effort === undefined || r.effort === 'none' ? undefined : budgetForEffort(r.effort);
}

/** The structured-output instruction: Converse has no JSON mode of its own. */
function formatInstruction(req: CanonicalRequest): string | undefined {
  const format = req.responseFormat;
  if (format?.type === 'json_object') {
    return JSON_OBJECT_INSTRUCTION;
  }
  if (format?.type === 'json_schema') {
    return `${JSON_OBJECT_INSTRUCTION} The object must match this JSON Schema: ${JSON.stringify(format.schema ?? { type: 'object' })}`;
  }
  return undefined;
}

/**
 * canonical -> Bedrock Converse / ConverseStream body (the model id is in the URL).
 * Decisions (docs/translation.md):
 * - the system prompt is `system` text blocks; `json_object` / `json_schema` output is
 *   asked for by an instruction appended to it (Converse has no JSON mode);
 * - `maxTokens` is the client's value, else the catalog's max output tokens;
 * - tools are `toolConfig.tools[].toolSpec` with `inputSchema.json`; `required` is `any`,
 *   a named tool `tool`; Converse has no `none` nor a parallel-call switch (both listed);
 * - Claude thinking goes in `additionalModelRequestFields.thinking`, with the Messages
 *   translator's budget rules (at least 1024, below `maxTokens`; temperature 1 only,
 *   top_p >= 0.95; a forced tool drops it); other families' reasoning is listed as dropped;
 * - signed reasoning goes back as `reasoningContent.reasoningText`, redacted as
 *   `redactedContent`; images travel as bytes (a link is a 400: Bedrock fetches nothing);
 * - `user` and metadata have no Converse field (listed).
 */
export function toConverseRequest(req: CanonicalRequest, model: CatalogModel): TranslatedRequest {
  const dropped: string[] = [];
  const extra = { ...req.extra };
  if (takeOutputConfigs(extra, dropped) !== undefined) {
    dropped.push(paramName(req, 'verbosity'));
  }
  const forwarded = applyExtraPolicy(extra, POLICY, dropped);
  const body: Json = { messages: messages(req.messages) };

  const system = req.system.filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  const instruction = formatInstruction(req);
  if (instruction !== undefined) {
    system.push({ text: instruction });
  }
  if (system.length > 0) {
    body.system = system;
  }

  let forced = false;
  const tools = req.tools.length > 0 ? req.tools : toolsOfHistory(req.messages);
  if (tools.length > 0) {
    const toolConfig: Json = {
      tools: tools.map((t) => ({
        toolSpec: {
          name: t.name,
          ...(t.description === undefined ? {} : { description: t.description }),
          inputSchema: { json: t.parameters },
        },
      })),
    };
    switch (req.toolChoice?.type) {
      case 'auto':
        toolConfig.toolChoice = { auto: {} };
        break;
      case 'required':
        toolConfig.toolChoice = { any: {} };
        forced = true;
        break;
      case 'tool':
        toolConfig.toolChoice = { tool: { name: req.toolChoice.name } };
        forced = true;
        break;
      case 'none':
        dropped.push('tool_choice');
        break;
      case undefined:
        break;
    }
    if (req.parallelToolCalls === false) {
      dropped.push('parallel_tool_calls');
    }
    body.toolConfig = toolConfig;
  }

  const clientMax = clampedMaxOutput(req, model.maxOutputTokens, dropped);
  let maxTokens = clientMax ?? model.maxOutputTokens;
  const additional: Json = {};
  let budget = requestedBudget(req);
  if (budget !== undefined && (!model.capabilities.reasoning || !isClaude(model) || forced)) {
    dropped.push(paramName(req, 'reasoning'));
    budget = undefined;
  }
  if (budget !== undefined) {
    ({ budget, maxTokens } = fitThinking(budget, maxTokens, clientMax, model.maxOutputTokens));
    if (budget === undefined) {
      dropped.push(paramName(req, 'reasoning'));
    } else {
      additional.thinking = { type: 'enabled', budget_tokens: budget };
    }
  }
  const inference: Json = { maxTokens };
  if (req.temperature !== undefined) {
    if (budget !== undefined && req.temperature !== 1) {
      dropped.push(paramName(req, 'temperature'));
    } else {
      inference.temperature = Math.min(req.temperature, 1);
      if (req.temperature > 1) {
        dropped.push(paramName(req, 'temperature'));
      }
    }
  }
  if (req.topP !== undefined) {
    if (budget !== undefined && req.topP < 0.95) {
      dropped.push(paramName(req, 'topP'));
    } else {
      inference.topP = req.topP;
    }
  }
  if (req.stop.length > 0) {
    inference.stopSequences = req.stop;
    if (isClaude(model)) {
      // Which sequence stopped the answer: Claude reports it, Converse only when asked.
      body.additionalModelResponseFieldPaths = ['/stop_sequence'];
    }
  }
  body.inferenceConfig = inference;
  if (forwarded.top_k !== undefined) {
    additional.top_k = forwarded.top_k;
  }
  if (Object.keys(additional).length > 0) {
    body.additionalModelRequestFields = additional;
  }
  if (req.user !== undefined) {
    dropped.push(paramName(req, 'user'));
  }
  if (Object.keys(req.metadata ?? {}).some((k) => k !== 'user_id')) {
    dropped.push(paramName(req, 'metadata'));
  }
  return { body, dropped: [...new Set(dropped)] };
}
