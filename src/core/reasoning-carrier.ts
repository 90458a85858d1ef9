import type { ReasoningPart } from './canonical';

/**
 * Signed reasoning must survive a round trip through a client of another format. Each
 * format has one opaque carrier: Anthropic-shaped reasoning (a Messages `thinking` block,
 * a chat `thinking_blocks` entry) has its `signature`, a Responses reasoning item has
 * its `encrypted_content`. When the payload comes from the other provider family it
 * travels inside that carrier with a gateway prefix, and the decoder of the next turn
 * takes it back out:
 *
 * - OpenAI `encrypted_content` in a thinking signature: `gwoai1.<item id>.<payload>`;
 * - an Anthropic signature in `encrypted_content`: `gwant1.sig.<signature>`;
 * - Anthropic redacted thinking data in `encrypted_content`: `gwant1.redacted.<data>`.
 *
 * Neither provider's payloads contain a `.`-separated `gw...1.` prefix, so a native
 * payload is never mistaken for a wrapped one.
 */
const OPENAI_IN_SIGNATURE = 'gwoai1.';
const ANTHROPIC_SIGNATURE = 'gwant1.sig.';
const ANTHROPIC_REDACTED = 'gwant1.redacted.';

type Carried = Pick<ReasoningPart, 'signature' | 'encrypted' | 'itemId' | 'redacted'>;

/** The `signature` to show on a thinking block for this reasoning ('' when none). */
export function thinkingSignature(r: Carried): string {
  if (r.signature !== undefined && r.signature !== '') {
    return r.signature;
  }
  if (r.encrypted !== undefined && !r.redacted) {
    return `${OPENAI_IN_SIGNATURE}${r.itemId ?? ''}.${r.encrypted}`;
  }
  return '';
}

/** What a thinking block's signature carries back in. */
export function fromThinkingSignature(signature: string): Carried {
  if (signature.startsWith(OPENAI_IN_SIGNATURE)) {
    const rest = signature.slice(OPENAI_IN_SIGNATURE.length);
    const dot = rest.indexOf('.');
    const itemId = dot > 0 ? rest.slice(0, dot) : undefined;
    const carried: Carried = { encrypted: rest.slice(dot + 1) };
    if (itemId !== undefined) {
      carried.itemId = itemId;
    }
    return carried;
  }
  return signature === '' ? {} : { signature };
}

/** The `encrypted_content` to show on a Responses reasoning item (undefined when none). */
export function encryptedContent(r: Carried): string | undefined {
  if (r.redacted && r.encrypted !== undefined) {
    return `${ANTHROPIC_REDACTED}${r.encrypted}`;
  }
  if (r.signature !== undefined && r.signature !== '') {
    return `${ANTHROPIC_SIGNATURE}${r.signature}`;
  }
  return r.encrypted;
}

/** What a reasoning item's `encrypted_content` carries back in. */
export function fromEncryptedContent(payload: string): Carried {
  if (payload.startsWith(ANTHROPIC_SIGNATURE)) {
    return { signature: payload.slice(ANTHROPIC_SIGNATURE.length) };
  }
  if (payload.startsWith(ANTHROPIC_REDACTED)) {
    return { encrypted: payload.slice(ANTHROPIC_REDACTED.length), redacted: true };
  }
  return { encrypted: payload };
}
