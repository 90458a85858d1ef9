import type { CatalogModel } from '../../../catalog/catalog.types';
import type { CanonicalRequest, ImagePart, TextPart } from '../../../core/canonical';
import {
  CHAT_ONLY_REJECTS,
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
import { imageUrl } from './to-openai-chat';

type Json = Record<string, unknown>;

const POLICY: ExtraPolicy = {
  target: 'OpenAI Responses',
  forward: new Set(['service_tier', 'prompt_cache_key', 'safety_identifier', 'truncation']),
  // Reasoning payloads are always requested (below); the client's encoder decides what it sees.
  ignore: new Set(['include', 'stream_options', 'store']),
  reject: {
    ...CHAT_ONLY_REJECTS,
    mcp_servers: (v) => Array.isArray(v) && v.length > 0,
    container: () => true,
  },
};

function inputContent(parts: (TextPart | ImagePart)[]): Json[] {
  return parts.map((p) =>
    p.type === 'text'
      ? { type: 'input_text', text: p.text }
      : { type: 'input_image', image_url: imageUrl(p), detail: p.detail ?? 'auto' },
  );
}

/** A mid-conversation system message stays in place, as a system input item. */
function systemItems(req: CanonicalRequest, at: number, last: boolean): Json[] {
  return req.system
    .filter((p) => p.at !== undefined && (p.at === at || (last && p.at > at)))
    .map((p) => ({ role: 'system', content: p.text }));
}

function input(req: CanonicalRequest): Json[] {
  const items: Json[] = [];
  for (const [i, m] of req.messages.entries()) {
    items.push(...systemItems(req, i, false));
    if (m.role === 'user') {
      const rest: (TextPart | ImagePart)[] = [];
      for (const part of m.parts) {
        if (part.type === 'tool_result') {
          const onlyText = part.content.every((p) => p.type === 'text');
          items.push({
            type: 'function_call_output',
            call_id: part.toolCallId,
            output: onlyText
              ? part.content.map((p) => (p as TextPart).text).join('')
              : inputContent(part.content),
          });
        } else if (part.type === 'text' || part.type === 'image') {
          rest.push(part);
        }
      }
      if (rest.length > 0) {
        items.push({ role: 'user', content: inputContent(rest) });
      }
      continue;
    }
    let text = '';
    const flush = (): void => {
      if (text !== '') {
        items.push({ role: 'assistant', content: text });
        text = '';
      }
    };
    for (const part of m.parts) {
      switch (part.type) {
        case 'text':
          text += part.text;
          break;
        case 'tool_call':
          flush();
          items.push({
            type: 'function_call',
            call_id: part.id,
            name: part.name,
            arguments: part.arguments,
          });
          break;
        case 'reasoning':
          // Only OpenAI's own encrypted reasoning restores anything upstream.
          if (part.encrypted !== undefined && !part.redacted) {
            flush();
            const summary = part.summary ?? (part.text ? [part.text] : []);
            const item: Json = {
              type: 'reasoning',
              summary: summary.map((s) => ({ type: 'summary_text', text: s })),
              encrypted_content: part.encrypted,
            };
            if (part.itemId !== undefined) {
              item.id = part.itemId;
            }
            items.push(item);
          }
          break;
        case 'image':
        case 'tool_result':
          break;
      }
    }
    flush();
  }
  items.push(...systemItems(req, req.messages.length, true));
  return items;
}

/**
 * canonical -> Responses API request body. Stateless: `store: false`, and for reasoning
 * models `include: ["reasoning.encrypted_content"]` so the reasoning can come back in the
 * next turn's input, with summaries (`summary: auto`) whenever reasoning was asked for.
 * Leading system text becomes `instructions` (parts joined by blank lines, in order); a
 * mid-conversation system message stays in place as a system input item. Reasoning
 * models reject sampling parameters, so temperature and top_p are dropped for them.
 * Function tools default to `strict: false` (the Responses API would default to true).
 * Responses has no stop sequences: a request with them is rejected.
 */
export function toOpenAiResponsesRequest(
  req: CanonicalRequest,
  model: CatalogModel,
): TranslatedRequest {
  const dropped: string[] = [];
  const extra = { ...req.extra };
  const textConfig: Json = {};
  const verbosity = takeOutputConfigs(extra, dropped, ['verbosity']);
  if (verbosity !== undefined) {
    textConfig.verbosity = verbosity;
  }
  const cacheFields = openAiCacheFields(req, extra, dropped);
  const forwarded = applyExtraPolicy(extra, POLICY, dropped);
  if (req.stop.length > 0) {
    rejectParam(paramName(req, 'stop'), 'OpenAI Responses', ' (it has no stop sequences)');
  }
  const body: Json = { model: model.upstreamId };
  const instructions = req.system
    .filter((p) => p.at === undefined)
    .map((p) => p.text)
    .filter((t) => t !== '')
    .join('\n\n');
  if (instructions !== '') {
    body.instructions = instructions;
  }
  body.input = input(req);
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => {
      const tool: Json = {
        type: 'function',
        name: t.name,
        parameters: t.parameters,
        strict: t.strict ?? false,
      };
      if (t.description !== undefined) {
        tool.description = t.description;
      }
      return tool;
    });
    const choice = openAiToolChoice(req, (name) => ({ type: 'function', name }));
    if (choice !== undefined) {
      body.tool_choice = choice;
    }
    if (req.parallelToolCalls !== undefined) {
      body.parallel_tool_calls = req.parallelToolCalls;
    }
  }
  const maxTokens = clampedMaxOutput(req, model.maxOutputTokens, dropped);
  if (maxTokens !== undefined) {
    body.max_output_tokens = maxTokens;
  }
  const reasoningModel = model.capabilities.reasoning;
  for (const [param, value, field] of [
    ['temperature', req.temperature, 'temperature'],
    ['topP', req.topP, 'top_p'],
  ] as const) {
    if (value === undefined) {
      continue;
    }
    if (reasoningModel) {
      dropped.push(paramName(req, param));
    } else {
      body[field] = value;
    }
  }
  const effort = openAiEffort(req.reasoning);
  if (reasoningModel) {
    if (effort !== undefined) {
      body.reasoning =
        effort === 'none' ? { effort } : { effort, summary: req.reasoning?.summary ?? 'auto' };
    }
    body.include = ['reasoning.encrypted_content'];
  } else if (effort !== undefined && effort !== 'none') {
    dropped.push(paramName(req, 'reasoning'));
  }
  body.store = false;
  const format = req.responseFormat;
  if (format?.type === 'json_object' || format?.type === 'text') {
    textConfig.format = { type: format.type };
  } else if (format?.type === 'json_schema') {
    const f: Json = {
      type: 'json_schema',
      name: format.name ?? 'response',
      schema: format.schema ?? {},
    };
    if (format.description !== undefined) {
      f.description = format.description;
    }
    if (format.strict !== undefined) {
      f.strict = format.strict;
    }
    textConfig.format = f;
  }
  if (Object.keys(textConfig).length > 0) {
    body.text = textConfig;
  }
  // Messages' `metadata.user_id` (Claude Code's is a long JSON string) goes only hashed.
  if (req.user !== undefined && req.source !== 'messages') {
    body.user = req.user;
  }
  const metadata = Object.entries(req.metadata ?? {}).filter(([k]) => k !== 'user_id');
  if (metadata.length > 0) {
    body.metadata = Object.fromEntries(metadata);
  }
  if (req.stream) {
    body.stream = true;
  }
  Object.assign(body, cacheFields, forwarded);
  return { body, dropped: [...new Set(dropped)] };
}
