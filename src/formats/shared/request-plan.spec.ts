import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest } from '../../common/request-context';
import type { ChatCompletionRequestDto } from '../chat-completions/chat-request.dto';
import { chatAdapter } from '../chat-completions/chat.adapter';
import { type RequestPlan, upstreamPayload } from './request-plan';

/** A frozen plan as the generation guard makes it, for the fields the fast path reads. */
function planOf(
  body: Record<string, unknown>,
  raw: Buffer | undefined,
): RequestPlan<ChatCompletionRequestDto> {
  Object.freeze(body);
  return Object.freeze({
    body,
    received: body,
    raw,
    req: { ctx: { requestId: 'r', startedAt: 0n } } as unknown as GatewayRequest,
  }) as unknown as RequestPlan<ChatCompletionRequestDto>;
}

const served = (id: string, upstreamId: string): CatalogModel =>
  ({ id, upstreamId }) as unknown as CatalogModel;

describe('upstreamPayload', () => {
  it("sends the client's own bytes when nothing differs", () => {
    const raw = Buffer.from('{"model":"m","messages":[]}');
    const plan = planOf({ model: 'm', messages: [] }, raw);
    expect(upstreamPayload(plan, 'm')).toBe(raw);
  });

  it('serializes a copy with the upstream id, the plan unchanged', () => {
    const raw = Buffer.from('{"model":"m","messages":[]}');
    const plan = planOf({ model: 'm', messages: [] }, raw);
    expect(upstreamPayload(plan, 'gpt-x')).toBe('{"model":"gpt-x","messages":[]}');
    expect(plan.body.model).toBe('m');
  });

  it('serializes the body when admission took fields out (no raw bytes)', () => {
    const plan = planOf({ model: 'm', messages: [] }, undefined);
    expect(upstreamPayload(plan, 'm')).toBe('{"model":"m","messages":[]}');
  });
});

describe('chat fast path over a frozen plan', () => {
  it('derives each attempt body from the plan: a fallback never sees an earlier rewrite', () => {
    const raw = Buffer.from('{"model":"a","stream":true,"messages":[]}');
    const plan = planOf({ model: 'a', stream: true, messages: [] }, raw);
    // First attempt: same id, usage spliced into the client's bytes.
    const first = chatAdapter.native(plan, served('a', 'a')).payload;
    expect(JSON.parse(first.toString())).toEqual({
      model: 'a',
      stream: true,
      stream_options: { include_usage: true },
      messages: [],
    });
    // A fallback served under another upstream id: a copy from the same plan.
    const second = chatAdapter.native(plan, served('b', 'b-upstream')).payload;
    expect(JSON.parse(second.toString())).toEqual({
      model: 'b-upstream',
      stream: true,
      messages: [],
      stream_options: { include_usage: true },
    });
    expect(plan.body).toEqual({ model: 'a', stream: true, messages: [] });
    expect(Object.isFrozen(plan.body)).toBe(true);
  });

  it("keeps the client's stream_options and adds include_usage to a copy", () => {
    const options = Object.freeze({ include_obfuscation: false });
    const plan = planOf(
      { model: 'a', stream: true, stream_options: options, messages: [] },
      undefined,
    );
    const payload = chatAdapter.native(plan, served('a', 'a')).payload;
    expect(JSON.parse(payload.toString()).stream_options).toEqual({
      include_obfuscation: false,
      include_usage: true,
    });
    expect(options).toEqual({ include_obfuscation: false });
  });
});
