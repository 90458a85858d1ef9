import { Tiktoken } from 'js-tiktoken/lite';
import type { CanonicalRequest, ContentPart } from '../../core/canonical';

/**
 * Input-token estimate for `POST /v1/messages/count_tokens` when the model is not served
 * by Anthropic (which counts exactly). An estimate: OpenAI-family models are counted with
 * `o200k_base`, every other family with `cl100k_base` (close to, not equal to, their own
 * tokenizers); each message adds a small framing overhead and each image a flat amount.
 */

export type EncodingName = 'o200k_base' | 'cl100k_base';

/** Framing tokens per message (role markers), as the OpenAI cookbook counts them. */
export const MESSAGE_OVERHEAD = 3;
/** An image of about 1.15 megapixels, the size Anthropic scales images down to (~w*h/750). */
export const IMAGE_TOKENS = 1600;

const encoders = new Map<EncodingName, Promise<Tiktoken>>();

async function load(name: EncodingName): Promise<Tiktoken> {
  // The rank tables are megabytes of text: loaded on first use, once per process.
  const ranks =
    name === 'o200k_base'
      ? (await import('js-tiktoken/ranks/o200k_base')).default
      : (await import('js-tiktoken/ranks/cl100k_base')).default;
  return new Tiktoken(ranks);
}

function encoder(name: EncodingName): Promise<Tiktoken> {
  let pending = encoders.get(name);
  if (!pending) {
    pending = load(name);
    encoders.set(name, pending);
  }
  return pending;
}

export function encodingFor(family: string): EncodingName {
  return family === 'openai' ? 'o200k_base' : 'cl100k_base';
}

/** Estimates the input tokens of a canonical request for a model of `family`. */
export async function estimateInputTokens(req: CanonicalRequest, family: string): Promise<number> {
  const tokenizer = await encoder(encodingFor(family));
  // Special-token text (e.g. "<|endoftext|>") is counted as plain text, never rejected.
  const count = (text: string | undefined): number =>
    text ? tokenizer.encode(text, [], []).length : 0;
  const part = (p: ContentPart): number => {
    switch (p.type) {
      case 'text':
        return count(p.text);
      case 'image':
        return IMAGE_TOKENS;
      case 'tool_call':
        return count(p.name) + count(p.arguments);
      case 'tool_result':
        return p.content.reduce((n, c) => n + part(c), 0);
      case 'reasoning':
        return count(p.text);
    }
  };
  let total = req.system.reduce((n, p) => n + count(p.text), 0);
  for (const message of req.messages) {
    total += MESSAGE_OVERHEAD + message.parts.reduce((n, p) => n + part(p), 0);
  }
  for (const tool of req.tools) {
    total += count(tool.name) + count(tool.description) + count(JSON.stringify(tool.parameters));
  }
  return total;
}
