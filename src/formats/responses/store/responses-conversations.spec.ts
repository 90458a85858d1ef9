import type { ConfigService } from '@nestjs/config';
import type { ApiKeyInfo } from '../../../common/key-policy';
import type { AllConfig } from '../../../config';
import { ObjectOwnership } from '../../../ownership/object-ownership.service';
import { MemoryOwnerStore, type OwnedObject } from '../../../ownership/owner-store';
import type { GenerationRoute } from '../../shared/canonical-path';
import type { ResponsesRequestDto } from '../responses-request.dto';
import {
  ItemNotFoundError,
  PreviousResponseNotFoundError,
  ResponsesOwnership,
  STORED_RESPONSE,
  STORED_RESPONSE_ITEM,
} from '../responses.ownership';
import { continuationOf } from './continuation';
import { MemoryResponseStore } from './response-store';
import { ResponsesConversations } from './responses-conversations';

const KEY: ApiKeyInfo = { id: 'ka', limits: {}, modelLimits: new Map() };
const OTHER: ApiKeyInfo = { ...KEY, id: 'kb' };
const canonical = { path: { kind: 'canonical' } } as unknown as GenerationRoute;
const native = { path: { kind: 'native' } } as unknown as GenerationRoute;

function setup(maxDepth = 10) {
  const owners = new ObjectOwnership(new MemoryOwnerStore(1_000));
  const store = new MemoryResponseStore(1_000, (objects) => owners.record(objects));
  const config = {
    get: () => ({ responses: { chainMaxDepth: maxDepth, chainMaxBytes: 1_000_000 } }),
  } as unknown as ConfigService<AllConfig, true>;
  const conversations = new ResponsesConversations(new ResponsesOwnership(owners), store, config);
  /** Stores turn `n` (a user message and an answer) continuing `previous`. */
  const turn = async (n: number, previous: string | null): Promise<string> => {
    const id = `resp_${n}`;
    const owner = { keyId: KEY.id, provider: 'local', model: 'm' };
    const objects: OwnedObject[] = [
      { ...owner, id, kind: STORED_RESPONSE },
      { ...owner, id: `msg_u${n}`, kind: STORED_RESPONSE_ITEM, parentId: id },
      { ...owner, id: `msg_a${n}`, kind: STORED_RESPONSE_ITEM, parentId: id },
    ];
    await store.put(
      {
        id,
        previousId: previous,
        keyId: KEY.id,
        team: null,
        provider: 'local',
        model: 'm',
        inputItems: JSON.stringify([
          { id: `msg_u${n}`, type: 'message', role: 'user', content: `q${n}` },
        ]),
        response: JSON.stringify({
          id,
          output: [{ id: `msg_a${n}`, type: 'message', role: 'assistant', content: `a${n}` }],
        }),
      },
      new Date(Date.now() + 60_000),
      objects,
    );
    return id;
  };
  return { conversations, turn };
}

const body = (extra: Partial<ResponsesRequestDto>): ResponsesRequestDto => ({
  model: 'm',
  instructions: 'Now.',
  input: 'next',
  ...extra,
});

describe('ResponsesConversations', () => {
  it('names state only for previous_response_id or an item reference (no I/O otherwise)', () => {
    const { conversations } = setup();
    expect(conversations.names(body({}))).toBe(false);
    expect(
      conversations.names(body({ input: [{ role: 'user', content: 'x', id: 'msg_1' }] })),
    ).toBe(false);
    expect(conversations.names(body({ previous_response_id: 'resp_1' }))).toBe(true);
    expect(conversations.names(body({ input: [{ type: 'item_reference', id: 'msg_1' }] }))).toBe(
      true,
    );
  });

  it('rebuilds a chain oldest first, keeps the current instructions, echoes the id aside', async () => {
    const { conversations, turn } = setup();
    const one = await turn(1, null);
    const two = await turn(2, one);
    const rebuilt = await conversations.resolve(
      body({ previous_response_id: two }),
      KEY,
      canonical,
    );
    expect(rebuilt.input).toEqual([
      { id: 'msg_u1', type: 'message', role: 'user', content: 'q1' },
      { id: 'msg_a1', type: 'message', role: 'assistant', content: 'a1' },
      { id: 'msg_u2', type: 'message', role: 'user', content: 'q2' },
      { id: 'msg_a2', type: 'message', role: 'assistant', content: 'a2' },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next' }] },
    ]);
    expect(rebuilt.instructions).toBe('Now.');
    expect(rebuilt.previous_response_id).toBeUndefined();
    expect(JSON.parse(JSON.stringify(rebuilt))).not.toHaveProperty('previous_response_id');
    expect(continuationOf(rebuilt)?.previousResponseId).toBe(two);
    expect(Object.isFrozen(rebuilt)).toBe(true);
  });

  it('strips the gateway ids for an upstream that stores responses itself', async () => {
    const { conversations, turn } = setup();
    const one = await turn(1, null);
    const rebuilt = await conversations.resolve(body({ previous_response_id: one }), KEY, native);
    expect((rebuilt.input as { id?: string }[]).some((i) => i.id !== undefined)).toBe(false);
  });

  it('resolves item references without a previous response', async () => {
    const { conversations, turn } = setup();
    await turn(1, null);
    const rebuilt = await conversations.resolve(
      body({
        input: [
          { type: 'item_reference', id: 'msg_a1' },
          { role: 'user', content: 'go' },
        ],
      }),
      KEY,
      canonical,
    );
    expect(rebuilt.input).toEqual([
      { id: 'msg_a1', type: 'message', role: 'assistant', content: 'a1' },
      { role: 'user', content: 'go' },
    ]);
    expect(continuationOf(rebuilt)?.previousResponseId).toBeNull();
  });

  it("refuses another key's chain and items as unknown", async () => {
    const { conversations, turn } = setup();
    const one = await turn(1, null);
    await expect(
      conversations.resolve(body({ previous_response_id: one }), OTHER, canonical),
    ).rejects.toBeInstanceOf(PreviousResponseNotFoundError);
    await expect(
      conversations.resolve(
        body({ input: [{ type: 'item_reference', id: 'msg_a1' }] }),
        OTHER,
        canonical,
      ),
    ).rejects.toBeInstanceOf(ItemNotFoundError);
  });

  it('refuses a chain deeper than the bound with a 400 on previous_response_id', async () => {
    const { conversations, turn } = setup(2);
    let previous: string | null = null;
    for (let n = 1; n <= 3; n++) {
      previous = await turn(n, previous);
    }
    const error = await conversations
      .resolve(body({ previous_response_id: previous }), KEY, canonical)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      param: 'previous_response_id',
      code: 'conversation_too_long',
    });
  });

  it('leaves ids held by a provider as they are', async () => {
    const { conversations } = setup();
    const sent = body({ previous_response_id: 'resp_upstream' });
    await expect(conversations.resolve(sent, { ...KEY, admin: true }, canonical)).resolves.toBe(
      sent,
    );
  });
});
