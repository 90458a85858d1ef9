import type { ConfigService } from '@nestjs/config';
import { MemoryCacheStore } from '../../cache/cache-store';
import { ResponseCache } from '../../cache/response-cache';
import type { AllConfig } from '../../config';
import { readObservabilityConfig } from '../../config/observability.config';
import { MetricsService } from '../../observability/metrics/metrics.service';
import { testModel } from '../../testing/test-model';
import { chatAdapter } from '../chat-completions/chat.adapter';
import { messagesAdapter } from '../messages/messages.adapter';
import { responsesAdapter } from '../responses/responses.adapter';
import { cacheTicket } from './cached-answers';
import type { GenerationAdapter, GenerationBody } from './generation.adapter';
import type { RequestPlan } from './request-plan';

const cache = new ResponseCache(
  {
    get: () => ({
      defaultTtlS: 0,
      maxBytes: 1 << 20,
      maxEntries: 10,
      maxEntryBytes: 1 << 20,
      keyPrefix: 'gw:rc:',
    }),
  } as unknown as ConfigService<AllConfig, true>,
  new MemoryCacheStore(1 << 20, 10),
  new MetricsService(readObservabilityConfig({})),
);

function ticketOf<B extends GenerationBody>(
  adapter: GenerationAdapter<B>,
  body: Record<string, unknown>,
  cacheTtlS: number | null = 60,
) {
  const model = testModel(adapter.format === 'messages' ? 'messages' : 'chat_completions', {
    cacheTtlS: cacheTtlS ?? undefined,
  });
  const plan = {
    route: { model },
    models: [model],
    body,
    received: body,
    protections: undefined,
    key: undefined,
    req: { headers: {} },
  } as unknown as RequestPlan<B>;
  return cacheTicket(cache, plan, adapter);
}

const chat = { model: 'public-model', messages: [{ role: 'user', content: 'Hi' }] };
const message = { ...chat, max_tokens: 10 };
const response = { model: 'public-model', input: 'Hi' };

describe('cacheTicket', () => {
  it('is given for a model with a ttl, and for no other', () => {
    expect(ticketOf(chatAdapter, chat)).toBeDefined();
    expect(ticketOf(chatAdapter, chat, null)).toBeUndefined();
    expect(ticketOf(chatAdapter, chat, 0)).toBeUndefined();
  });

  it('refuses chat answers the stored form cannot carry whole', () => {
    expect(ticketOf(chatAdapter, { ...chat, n: 1 })).toBeDefined();
    expect(ticketOf(chatAdapter, { ...chat, n: 2 })).toBeUndefined();
    expect(ticketOf(chatAdapter, { ...chat, logprobs: true })).toBeUndefined();
    expect(ticketOf(chatAdapter, { ...chat, audio: { voice: 'alloy' } })).toBeUndefined();
    expect(
      ticketOf(chatAdapter, { ...chat, tools: [{ type: 'web_search_preview' }] }),
    ).toBeUndefined();
  });

  it('shares Responses answers only with store: false and nothing server-held', () => {
    expect(ticketOf(responsesAdapter, { ...response, store: false })).toBeDefined();
    expect(ticketOf(responsesAdapter, response)).toBeUndefined();
    expect(ticketOf(responsesAdapter, { ...response, store: true })).toBeUndefined();
    expect(
      ticketOf(responsesAdapter, { ...response, store: false, background: true }),
    ).toBeUndefined();
    expect(
      ticketOf(responsesAdapter, { ...response, store: false, previous_response_id: 'resp_1' }),
    ).toBeUndefined();
  });

  it('refuses Messages requests that use server-side tools or state', () => {
    expect(ticketOf(messagesAdapter, message)).toBeDefined();
    expect(ticketOf(messagesAdapter, { ...message, mcp_servers: [] })).toBeUndefined();
    expect(ticketOf(messagesAdapter, { ...message, container: 'c_1' })).toBeUndefined();
    expect(
      ticketOf(messagesAdapter, { ...message, tools: [{ type: 'web_search_20250305' }] }),
    ).toBeUndefined();
  });
});
