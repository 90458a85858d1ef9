import type { RequestPlan } from '../shared/request-plan';
import { Subject } from 'rxjs';
import {
  responsesObject,
  responsesStream,
  type UpstreamItem,
} from '../../../test/support/responses-fixtures';
import type { ApiKeyInfo } from '../../auth/api-key.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest } from '../../common/request-context';
import type { SseFrame } from '../../common/sse/sse-writer';
import { ObjectOwnership } from '../../ownership/object-ownership.service';
import { MemoryOwnerStore, type OwnedObject } from '../../ownership/owner-store';
import type { ResponsesRequestDto } from './responses-request.dto';
import { ownedResponsesAdapter } from './responses.adapter';
import {
  ItemNotFoundError,
  PreviousResponseNotFoundError,
  ResponsesOwnership,
} from './responses.ownership';

const ITEMS: UpstreamItem[] = [
  { kind: 'reasoning', summaries: ['**Plan**\n\nLook it up.'] },
  { kind: 'message', pieces: ['Hel', 'lo'] },
];
const KEY: ApiKeyInfo = { id: 'ka', team: 'alpha', limits: {}, modelLimits: new Map() };
const MODEL = {
  id: 'public-gpt',
  upstreamId: 'upstream-gpt',
  provider: { name: 'fake-openai' },
} as unknown as CatalogModel;

/** A memory store whose writes wait for `open()`. */
class GatedStore extends MemoryOwnerStore {
  open!: () => void;
  private gate = new Promise<void>((resolve) => (this.open = resolve));

  constructor() {
    super(100);
  }

  override async insert(objects: readonly OwnedObject[]): Promise<void> {
    await this.gate;
    return super.insert(objects);
  }
}

function setup() {
  const store = new GatedStore();
  const ownership = new ResponsesOwnership(new ObjectOwnership(store));
  const req = { ctx: { key: KEY } } as unknown as GatewayRequest;
  const body = { model: 'public-gpt', input: 'hi' } as ResponsesRequestDto;
  return { store, ownership, req, body };
}

/** A plan as the generation guard makes it, for the fields the native call reads. */
function planOf(body: ResponsesRequestDto, req: GatewayRequest): RequestPlan<ResponsesRequestDto> {
  return {
    body,
    received: body,
    req,
    raw: undefined,
  } as unknown as RequestPlan<ResponsesRequestDto>;
}

describe('owned native Responses calls', () => {
  it('holds the terminal event until the response and its items are recorded', async () => {
    const { store, ownership, req, body } = setup();
    const call = ownedResponsesAdapter(ownership).native(planOf(body, req), MODEL);
    const upstream = new Subject<SseFrame>();
    const out: string[] = [];
    let completed = false;
    call.frames(upstream).subscribe({
      next: (f) => out.push(f.event ?? ''),
      complete: () => (completed = true),
    });
    const events = responsesStream('upstream-gpt', ITEMS);
    for (const e of events) {
      upstream.next({ event: e.type as string, data: JSON.stringify(e) });
    }
    upstream.complete();
    expect(out).toEqual(events.slice(0, -1).map((e) => e.type));
    expect(completed).toBe(false);
    store.open();
    await new Promise((r) => setImmediate(r));
    expect(out).toEqual(events.map((e) => e.type));
    expect(completed).toBe(true);
    const ids = (await store.find(['resp_up_1', 'rs_up_0', 'msg_up_1'])).map((r) => [
      r.id,
      r.kind,
      r.keyId,
      r.team,
      r.provider,
      r.model,
    ]);
    expect(ids).toEqual([
      ['resp_up_1', 'response', 'ka', 'alpha', 'fake-openai', 'public-gpt'],
      ['rs_up_0', 'response_item', 'ka', 'alpha', 'fake-openai', 'public-gpt'],
      ['msg_up_1', 'response_item', 'ka', 'alpha', 'fake-openai', 'public-gpt'],
    ]);
  });

  it('records an unstreamed answer before it is sent', async () => {
    const { store, ownership, req, body } = setup();
    const call = ownedResponsesAdapter(ownership).native(planOf(body, req), MODEL);
    let settled = false;
    const answered = call.answered!(responsesObject('upstream-gpt', ITEMS)).then(
      () => (settled = true),
    );
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    store.open();
    await answered;
    expect((await store.find(['resp_up_1', 'msg_up_1'])).length).toBe(2);
  });

  it('records nothing for store: false', () => {
    const { ownership, req, body } = setup();
    body.store = false;
    expect(
      ownedResponsesAdapter(ownership).native(planOf(body, req), MODEL).answered,
    ).toBeUndefined();
  });
});

describe('ResponsesOwnership.checkContinuation', () => {
  it('asks nothing of the store for a request that names no stored object', () => {
    const { ownership, body } = setup();
    body.input = [{ role: 'user', content: 'hi' }];
    expect(ownership.checkContinuation(body, KEY)).toBeUndefined();
  });

  it("refuses another key's response and items as unknown, and lets carried unknown items pass", async () => {
    const { store, ownership, req, body } = setup();
    store.open();
    await ownedResponsesAdapter(ownership).native(planOf(body, req), MODEL).answered!(
      responsesObject('upstream-gpt', ITEMS),
    );
    const other: ApiKeyInfo = { ...KEY, id: 'kb' };
    await expect(
      ownership.checkContinuation({ ...body, previous_response_id: 'resp_up_1' }, other),
    ).rejects.toBeInstanceOf(PreviousResponseNotFoundError);
    await expect(
      ownership.checkContinuation(
        { ...body, input: [{ type: 'item_reference', id: 'msg_up_1' }] },
        other,
      ),
    ).rejects.toBeInstanceOf(ItemNotFoundError);
    await expect(
      ownership.checkContinuation(
        { ...body, input: [{ type: 'item_reference', id: 'msg_never_seen' }] },
        KEY,
      ),
    ).rejects.toBeInstanceOf(ItemNotFoundError);
    await expect(
      ownership.checkContinuation(
        { ...body, input: [{ type: 'reasoning', id: 'rs_from_elsewhere', summary: [] }] },
        other,
      ),
    ).resolves.toBeUndefined();
    await expect(
      ownership.checkContinuation(
        {
          ...body,
          previous_response_id: 'resp_up_1',
          input: [{ type: 'item_reference', id: 'rs_up_0' }],
        },
        KEY,
      ),
    ).resolves.toBeUndefined();
  });

  it('looks up no carried output id of a stateless request, only references and stored reasoning', async () => {
    const { store, ownership, req, body } = setup();
    store.open();
    await ownedResponsesAdapter(ownership).native(planOf(body, req), MODEL).answered!(
      responsesObject('upstream-gpt', ITEMS),
    );
    const other: ApiKeyInfo = { ...KEY, id: 'kb' };
    const stateless = { ...body, store: false };
    // Output items with their content, as Codex sends them back: no store round trip at all.
    expect(
      ownership.checkContinuation(
        {
          ...stateless,
          input: [
            { type: 'message', id: 'msg_up_1', role: 'assistant', content: 'Hello' },
            { type: 'reasoning', id: 'rs_up_0', summary: [], encrypted_content: 'gAAA' },
            { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'f', arguments: '{}' },
          ],
        },
        other,
      ),
    ).toBeUndefined();
    await expect(
      ownership.checkContinuation(
        { ...stateless, input: [{ type: 'item_reference', id: 'msg_up_1' }] },
        other,
      ),
    ).rejects.toBeInstanceOf(ItemNotFoundError);
    await expect(
      ownership.checkContinuation(
        { ...stateless, input: [{ type: 'reasoning', id: 'rs_up_0', summary: [] }] },
        other,
      ),
    ).rejects.toBeInstanceOf(ItemNotFoundError);
    // With a previous response the provider reads state: carried ids are checked again.
    await expect(
      ownership.checkContinuation(
        {
          ...stateless,
          previous_response_id: 'resp_up_1',
          input: [{ type: 'message', id: 'msg_up_1', role: 'assistant', content: 'Hello' }],
        },
        other,
      ),
    ).rejects.toBeInstanceOf(PreviousResponseNotFoundError);
  });
});
