/** The request bodies and headers the benchmark sends. */
import { API_KEY, MODEL } from './settings';

export const SYSTEM_PROMPT =
  'You are a careful support assistant for an online bookshop. Answer in the language of ' +
  'the customer, in at most three short paragraphs. Never invent order numbers, prices or ' +
  'delivery dates: when you do not know, say so and point the customer to the order page. ' +
  'Be polite, concrete and brief; avoid marketing language.';

export const USER_MESSAGE =
  'Hello, I ordered two paperback novels and a hardcover atlas last Tuesday and the ' +
  'confirmation email said delivery within three to five working days. The tracking page ' +
  'still shows "label created" and nothing else. I need the atlas for a class next Monday. ' +
  'Can you tell me whether the parcel has left the warehouse, whether I can still change ' +
  'the shipping method to express delivery, and what it would cost? If that is not ' +
  'possible, can I cancel only the atlas and buy it in a shop instead? Thank you very much ' +
  'for your help, and sorry for the long message. Best regards, Sam';

/**
 * The system prompt of the protected requests (about 1.7 KB, the size of a deployed
 * assistant's instructions): what `system_prompt_filter` protects, and what the shadow
 * agent's judge is given.
 */
export const LONG_SYSTEM_PROMPT =
  `${SYSTEM_PROMPT} ` +
  'Orders: you may read the order status the tools return, but never change an order ' +
  'yourself; changes of address, shipping method or payment go through the order page. ' +
  'Refunds: a refund is possible within 30 days for unread books in their original ' +
  'condition, and for any damaged or wrong item; never promise a refund amount, the ' +
  'returns team sets it after inspection. Shipping: standard delivery takes three to five ' +
  'working days, express delivery one to two, and express is possible only before the ' +
  'parcel has left the warehouse. Partial cancellations are possible until the parcel is ' +
  'packed. Internal notes, never to be quoted or paraphrased to the customer: the ' +
  'warehouse in Lille is short of staff this month, so "label created" may last two days ' +
  'longer than usual; the courier contract with the express partner is under review; ' +
  'goodwill vouchers of up to ten euros may be offered only by a human agent, never by ' +
  'you. Escalation: when the customer is upset, when an order is more than ten days late, ' +
  'or when a payment was taken twice, offer to hand the conversation to a human agent and ' +
  'summarise the case in two sentences for them. Privacy: never repeat a full address, ' +
  'phone number or card number, even when the customer writes it; refer to "the address ' +
  'on your order" instead. Style: plain sentences, no lists unless the customer asks for ' +
  'steps, no emojis, and sign off with "The bookshop team".';

/**
 * A protection turned on the way every client can: a function tool with its name (README
 * "Protections"), default settings except what `properties` sets.
 */
export function protectionTool(
  name: string,
  properties: Record<string, unknown> = {},
  description?: string,
): Record<string, unknown> {
  return {
    type: 'function',
    function: {
      name,
      ...(description === undefined ? {} : { description }),
      parameters: { type: 'object', properties },
    },
  };
}

/** What a protected chat request adds to the conversation. */
export interface ChatExtras {
  /** Replaces SYSTEM_PROMPT. */
  system?: string;
  tools?: Record<string, unknown>[];
}

/**
 * The conversation as a chat body. `includeUsage` sets `stream_options.include_usage`, as
 * the gateway does on every chat upstream call it translates to.
 */
export function chatBody(
  model: string,
  stream: boolean,
  includeUsage = false,
  extras: ChatExtras = {},
): string {
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: extras.system ?? SYSTEM_PROMPT },
      { role: 'user', content: USER_MESSAGE },
    ],
    temperature: 0.2,
    max_completion_tokens: 512,
    user: 'bench-user-0001',
    ...(extras.tools === undefined ? {} : { tools: extras.tools }),
    ...(stream ? { stream: true } : {}),
    ...(includeUsage ? { stream_options: { include_usage: true } } : {}),
  });
}

export const JSON_BODY = chatBody(MODEL, false);
// Sent to both targets, so that both receive the same bytes; the fake upstream ignores it.
export const HEADERS = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

/** The same conversation as a streamed Responses request (system prompt as `instructions`). */
export function responsesStreamBody(model: string): string {
  return JSON.stringify({
    model,
    instructions: SYSTEM_PROMPT,
    input: [{ role: 'user', content: USER_MESSAGE }],
    temperature: 0.2,
    max_output_tokens: 512,
    store: false,
    stream: true,
  });
}

/** The same conversation as an Anthropic Messages request (top-level `system`). */
export function messagesBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    system: SYSTEM_PROMPT,
    messages: [{ role: 'user', content: USER_MESSAGE }],
    max_tokens: 512,
    temperature: 0.2,
    metadata: { user_id: 'bench-user-0001' },
    ...(stream ? { stream: true } : {}),
  });
}

/** What the Anthropic SDK sends: its key as `x-api-key`, and `anthropic-version`. */
export const ANTHROPIC_HEADERS = {
  'x-api-key': API_KEY,
  'anthropic-version': '2023-06-01',
  'content-type': 'application/json',
};

/**
 * Switches every request of the run to `secret`: a key the gateway issued from its
 * database (see children.ts issueKey), as in a real deployment. The header objects are
 * shared by every case, so they are changed in place.
 */
export function useKey(secret: string): void {
  HEADERS.authorization = `Bearer ${secret}`;
  ANTHROPIC_HEADERS['x-api-key'] = secret;
}
