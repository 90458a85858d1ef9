import type { CatalogModel } from '../../../catalog/catalog.types';
import type {
  CanonicalMessage,
  CanonicalRequest,
  ImagePart,
  ReasoningPart,
} from '../../../core/canonical';
import {
  CHAT_ONLY_REJECTS,
  type ExtraPolicy,
  type TranslatedRequest,
  applyExtraPolicy,
  budgetForEffort,
  paramName,
  takeOutputConfigs,
} from '../../translate-params';
import {
  type GeminiContent,
  type GeminiPart,
  type GeminiRequest,
  fromGeminiSignature,
} from './gemini.wire';

const POLICY: ExtraPolicy = {
  target: 'Gemini generateContent',
  ignore: new Set(['include', 'store', 'service_tier', 'prompt_cache_key', 'safety_identifier']),
  reject: {
    ...CHAT_ONLY_REJECTS,
    background: (v) => v === true,
    mcp_servers: (v) => Array.isArray(v) && v.length > 0,
  },
};

/** Gemini reads `inlineData` (base64) and `fileData` (a URI) parts; a data URL is inline. */
function imagePart(image: ImagePart): GeminiPart {
  const { source } = image;
  if (source.kind === 'base64') {
    return { inlineData: { mimeType: source.mediaType, data: source.data } };
  }
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(source.url);
  return data
    ? { inlineData: { mimeType: data[1], data: data[2] } }
    : { fileData: { mimeType: 'image/*', fileUri: source.url } };
}

/** A tool result's content as the `response` object Gemini wants (text under `output`). */
function toolResponse(parts: { type: string; text?: string }[], isError?: boolean): object {
  const text = parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text ?? '')
    .join('\n');
  return isError ? { error: text } : { output: text };
}

/**
 * Canonical messages as Gemini contents. Tool calls carry the name Gemini needs on the
 * matching `functionResponse`; a signed reasoning part from Gemini gives its thought
 * signature back on the part after it, as Gemini requires on function calls.
 */
function contents(messages: CanonicalMessage[]): GeminiContent[] {
  const names = new Map<string, string>();
  const out: GeminiContent[] = [];
  for (const message of messages) {
    const parts: GeminiPart[] = [];
    let signature: string | undefined;
    const sign = (part: GeminiPart): GeminiPart => {
      if (signature !== undefined) {
        part.thoughtSignature = signature;
        signature = undefined;
      }
      return part;
    };
    for (const part of message.parts) {
      switch (part.type) {
        case 'text':
          if (part.text !== '') {
            parts.push(sign({ text: part.text }));
          }
          break;
        case 'image':
          parts.push(imagePart(part));
          break;
        case 'tool_call': {
          names.set(part.id, part.name);
          let args: unknown;
          try {
            args = JSON.parse(part.arguments === '' ? '{}' : part.arguments);
          } catch {
            args = {};
          }
          parts.push(sign({ functionCall: { id: part.id, name: part.name, args } }));
          break;
        }
        case 'tool_result':
          parts.push({
            functionResponse: {
              id: part.toolCallId,
              // Tool results answer calls of an earlier turn of the same history.
              name: names.get(part.toolCallId) ?? '',
              response: toolResponse(part.content, part.isError),
            },
          });
          break;
        case 'reasoning':
          // Thought summaries are not sent back; only Gemini's own signatures are.
          signature = geminiSignature(part) ?? signature;
          break;
      }
    }
    if (parts.length > 0) {
      out.push({ role: message.role === 'assistant' ? 'model' : 'user', parts });
    }
  }
  return out;
}

function geminiSignature(part: ReasoningPart): string | undefined {
  return part.signature === undefined ? undefined : fromGeminiSignature(part.signature);
}

/** Thinking budget asked for: the client's budget, else the effort's, else none. */
function thinkingBudget(req: CanonicalRequest): number | undefined {
  const r = req.reasoning;
  if (r?.budgetTokens !== undefined) {
    return r.budgetTokens;
  }
  if (r?.effort === undefined) {
    return undefined;
  }
  return r.effort === 'none' ? 0 : budgetForEffort(r.effort);
}

/**
 * canonical -> Gemini `generateContent` body (the model is in the URL, not the body).
 * Decisions:
 * - the system prompt is `systemInstruction`; assistant turns have role `model`;
 * - tools are one `functionDeclarations` tool; tool choice is `toolConfig.functionCallingConfig`
 *   (`required` is `ANY`, a named tool `ANY` with `allowedFunctionNames`);
 * - reasoning becomes `thinkingConfig` with `includeThoughts` (summaries come back as
 *   thought parts), on reasoning models only (else dropped and listed);
 * - structured output is `responseMimeType: application/json` with `responseJsonSchema`;
 * - `user` and metadata have no Gemini field (dropped and listed).
 */
export function toGeminiRequest(req: CanonicalRequest, model: CatalogModel): TranslatedRequest {
  const dropped: string[] = [];
  const extra = { ...req.extra };
  if (takeOutputConfigs(extra, dropped) !== undefined) {
    dropped.push(paramName(req, 'verbosity'));
  }
  applyExtraPolicy(extra, POLICY, dropped);

  const body: GeminiRequest = { contents: contents(req.messages) };
  const system = req.system.filter((p) => p.text !== '').map((p) => ({ text: p.text }));
  if (system.length > 0) {
    body.systemInstruction = { parts: system };
  }
  if (req.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: req.tools.map((t) => ({
          name: t.name,
          ...(t.description === undefined ? {} : { description: t.description }),
          parametersJsonSchema: t.parameters,
        })),
      },
    ];
  }
  const choice = req.toolChoice;
  if (choice !== undefined && req.tools.length > 0) {
    body.toolConfig = {
      functionCallingConfig:
        choice.type === 'tool'
          ? { mode: 'ANY', allowedFunctionNames: [choice.name] }
          : { mode: choice.type === 'required' ? 'ANY' : choice.type === 'none' ? 'NONE' : 'AUTO' },
    };
  }

  const config: NonNullable<GeminiRequest['generationConfig']> = {};
  if (req.maxOutputTokens !== undefined) {
    config.maxOutputTokens = req.maxOutputTokens;
  }
  if (req.temperature !== undefined) {
    config.temperature = req.temperature;
  }
  if (req.topP !== undefined) {
    config.topP = req.topP;
  }
  if (req.stop.length > 0) {
    config.stopSequences = req.stop;
  }
  const format = req.responseFormat;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    if (format.schema !== undefined) {
      config.responseJsonSchema = format.schema;
    }
  }
  const budget = thinkingBudget(req);
  if (budget !== undefined) {
    if (model.capabilities.reasoning) {
      config.thinkingConfig = { thinkingBudget: budget, includeThoughts: budget > 0 };
    } else if (budget > 0) {
      dropped.push(paramName(req, 'reasoning'));
    }
  }
  if (Object.keys(config).length > 0) {
    body.generationConfig = config;
  }
  if (req.user !== undefined) {
    dropped.push(paramName(req, 'user'));
  }
  if (Object.keys(req.metadata ?? {}).some((k) => k !== 'user_id')) {
    dropped.push(paramName(req, 'metadata'));
  }
  return { body: body as unknown as Record<string, unknown>, dropped: [...new Set(dropped)] };
}
