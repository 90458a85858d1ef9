/**
 * The Gemini API's `generateContent` shapes the gateway writes and reads (v1beta; field
 * names as in ai.google.dev/api/generate-content). Answers are read through json-access,
 * so only the request side is typed in full.
 */

export interface GeminiPart {
  text?: string;
  /** A thought summary (with `thinkingConfig.includeThoughts`). */
  thought?: boolean;
  /** Opaque; must be given back on the same part of a later turn (function calls). */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType: string; fileUri: string };
  functionCall?: { id?: string; name: string; args: unknown };
  functionResponse?: { id?: string; name: string; response: object };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: {
    functionDeclarations: { name: string; description?: string; parametersJsonSchema: object }[];
  }[];
  toolConfig?: {
    functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
  };
  generationConfig?: {
    maxOutputTokens?: number;
    temperature?: number;
    topP?: number;
    stopSequences?: string[];
    responseMimeType?: string;
    responseJsonSchema?: object;
    thinkingConfig?: { thinkingBudget: number; includeThoughts: boolean };
  };
}

/**
 * A Gemini thought signature travels through clients as a reasoning signature with this
 * prefix, so that only Gemini's own signatures are ever given back to Gemini.
 */
const SIGNATURE_PREFIX = 'gwgem1.';

export function toGeminiSignature(signature: string): string {
  return SIGNATURE_PREFIX + signature;
}

/** The Gemini signature a reasoning signature carries, if it carries one. */
export function fromGeminiSignature(signature: string): string | undefined {
  return signature.startsWith(SIGNATURE_PREFIX)
    ? signature.slice(SIGNATURE_PREFIX.length)
    : undefined;
}

/** Whether a reasoning signature may go to Claude: present, and not a Gemini thought signature. */
export function isClaudeSignature(signature: string | undefined): signature is string {
  return (
    signature !== undefined && signature !== '' && fromGeminiSignature(signature) === undefined
  );
}
