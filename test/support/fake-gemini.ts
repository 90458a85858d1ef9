import type { RecordedRequest, Reply } from './fake-upstream';

/**
 * A Gemini API upstream (v1beta `generateContent` / `streamGenerateContent?alt=sse`), as
 * published at ai.google.dev/api/generate-content: it checks the key header, the body's
 * top-level fields and roles (an unknown field is Gemini's 400 INVALID_ARGUMENT), and
 * answers from the request: a function call when the last turn is the user's and tools are
 * declared, the tool's output echoed once a function response came back, thought summaries
 * (with a signature on the call) when `thinkingConfig.includeThoughts` is set.
 */

export const GEMINI_KEY = 'sk-upstream-secret';
export const GEMINI_USAGE = {
  promptTokenCount: 21,
  candidatesTokenCount: 9,
  thoughtsTokenCount: 6,
  totalTokenCount: 36,
};

const TOP_LEVEL = new Set([
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
]);

function error(status: number, code: string, message: string): Reply {
  return { status, json: { error: { code: status, message, status: code } } };
}

type Part = Record<string, any>;

/** The answer parts the fake model gives to `body`. */
function answer(body: any): { parts: Part[]; finishReason: string } {
  const contents: { role: string; parts: Part[] }[] = body.contents;
  const last = contents[contents.length - 1];
  const thoughts = body.generationConfig?.thinkingConfig?.includeThoughts === true;
  const declared = body.tools?.[0]?.functionDeclarations?.[0]?.name;
  const response = last.parts.find((p) => p.functionResponse)?.functionResponse;
  const system = body.systemInstruction?.parts?.[0]?.text ?? '';
  if (system.includes('[unsafe]')) {
    return { parts: [{ text: 'I can' }], finishReason: 'SAFETY' };
  }
  const parts: Part[] = thoughts ? [{ text: 'Considering the request.', thought: true }] : [];
  if (response) {
    parts.push({ text: `The tool said: ${response.response.output}` });
  } else if (declared) {
    parts.push({
      functionCall: { name: declared, args: { city: 'Paris' } },
      ...(thoughts ? { thoughtSignature: 'R2VtaW5pU2lnbmF0dXJl' } : {}),
    });
  } else {
    parts.push({ text: 'Hello from ' }, { text: 'Gemini.' });
  }
  return { parts, finishReason: 'STOP' };
}

/** Handles one call; `stream` when the path is `:streamGenerateContent`. */
export function geminiReply(req: RecordedRequest, stream: boolean): Reply {
  if (req.headers['x-goog-api-key'] !== GEMINI_KEY) {
    return error(403, 'PERMISSION_DENIED', "Method doesn't allow unregistered callers.");
  }
  if (stream && !req.url.includes('alt=sse')) {
    return error(400, 'INVALID_ARGUMENT', 'the fake serves streams as SSE only');
  }
  const body = req.body;
  const unknown = Object.keys(body ?? {}).filter((k) => !TOP_LEVEL.has(k));
  if (!Array.isArray(body?.contents) || unknown.length > 0) {
    return error(
      400,
      'INVALID_ARGUMENT',
      `Invalid JSON payload received. Unknown name "${unknown[0]}"`,
    );
  }
  if (body.contents.some((c: any) => c.role !== 'user' && c.role !== 'model')) {
    return error(400, 'INVALID_ARGUMENT', 'Please use a valid role: user, model.');
  }
  const { parts, finishReason } = answer(body);
  const meta = { modelVersion: 'gemini-upstream-2.5', responseId: 'gem-resp-1' };
  if (!stream) {
    return {
      json: {
        candidates: [{ content: { role: 'model', parts }, finishReason, index: 0 }],
        usageMetadata: GEMINI_USAGE,
        ...meta,
      },
    };
  }
  // One chunk per part, usage on every chunk, the finish reason on the last.
  return {
    headers: { 'content-type': 'text/event-stream' },
    sse: parts.map((part, i) => ({
      candidates: [
        {
          content: { role: 'model', parts: [part] },
          ...(i === parts.length - 1 ? { finishReason } : {}),
          index: 0,
        },
      ],
      usageMetadata: i === parts.length - 1 ? GEMINI_USAGE : { promptTokenCount: 21 },
      ...meta,
    })),
  };
}
