import { type ApiKeyInfo, ModelScope } from '../common/key-policy';
import { ObjectOwnership, OwnershipUnavailableError, accessOf } from './object-ownership.service';
import { MemoryOwnerStore, type OwnedObject, type OwnerStore } from './owner-store';

const key = (id: string, extra: Partial<ApiKeyInfo> = {}): ApiKeyInfo => ({
  id,
  limits: {},
  modelLimits: new Map(),
  ...extra,
});

const response = (id: string, keyId = 'ka', model = 'gpt'): OwnedObject => ({
  id,
  kind: 'response',
  keyId,
  provider: 'openai',
  model,
});

/** A memory store whose writes wait until the test lets them through (or fail). */
class GatedStore extends MemoryOwnerStore {
  gate: Promise<void> = Promise.resolve();
  failWrites = false;
  failReads = false;

  constructor() {
    super(10);
  }

  override async insert(objects: readonly OwnedObject[]): Promise<void> {
    await this.gate;
    if (this.failWrites) {
      throw new Error('connection refused');
    }
    return super.insert(objects);
  }

  override find(ids: readonly string[]): Promise<OwnedObject[]> {
    return this.failReads ? Promise.reject(new Error('connection refused')) : super.find(ids);
  }
}

describe('ObjectOwnership', () => {
  it('answers for a record whose write has not settled yet', async () => {
    const store = new GatedStore();
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    const owners = new ObjectOwnership(store);
    const written = owners.record([response('resp_1')]);
    expect((await owners.find(['resp_1'])).get('resp_1')?.keyId).toBe('ka');
    expect(await store.find(['resp_1'])).toEqual([]);
    open();
    await written;
    expect(await store.find(['resp_1'])).toEqual([response('resp_1')]);
    expect((await owners.find(['resp_1'])).get('resp_1')?.keyId).toBe('ka');
  });

  it('settles a failed write without rejecting, and the object stays unrecorded', async () => {
    const store = new GatedStore();
    store.failWrites = true;
    const owners = new ObjectOwnership(store);
    await expect(owners.record([response('resp_1')])).resolves.toBeUndefined();
    expect((await owners.find(['resp_1'])).size).toBe(0);
  });

  it('refuses with a 503 when the records cannot be read', async () => {
    const store = new GatedStore();
    store.failReads = true;
    const owners = new ObjectOwnership(store);
    const error = await owners.find(['resp_1']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OwnershipUnavailableError);
    expect((error as OwnershipUnavailableError).status).toBe(503);
  });

  it('forgets an object with its children, and keeps the first owner of an id', async () => {
    const store: OwnerStore = new MemoryOwnerStore(10);
    const owners = new ObjectOwnership(store);
    await owners.record([
      response('resp_1'),
      { ...response('msg_1'), kind: 'response_item', parentId: 'resp_1' },
      response('resp_2'),
    ]);
    await owners.record([response('resp_2', 'kb')]);
    expect((await owners.find(['resp_2'])).get('resp_2')?.keyId).toBe('ka');
    await owners.forget('resp_1');
    expect([...(await owners.find(['resp_1', 'msg_1', 'resp_2'])).keys()]).toEqual(['resp_2']);
  });
});

describe('MemoryOwnerStore', () => {
  it('drops the oldest records beyond its capacity', async () => {
    const store = new MemoryOwnerStore(2);
    await store.insert([response('r1'), response('r2'), response('r3')]);
    expect((await store.find(['r1', 'r2', 'r3'])).map((r) => r.id)).toEqual(['r2', 'r3']);
  });
});

describe('accessOf', () => {
  it('lets the key that made an object reach it, and no other key of its team', () => {
    const record = { ...response('resp_1'), team: 'alpha' };
    expect(accessOf(record, key('ka', { team: 'alpha' }))).toBe('owner');
    expect(accessOf(record, key('kb', { team: 'alpha' }))).toBe('refused');
  });

  it("refuses the owner once its scope no longer allows the object's model", () => {
    const scoped = key('ka', { scope: { models: new ModelScope(['other-*']) } });
    expect(accessOf(response('resp_1', 'ka', 'gpt'), scoped)).toBe('refused');
    expect(accessOf(response('resp_1', 'ka', 'other-gpt'), scoped)).toBe('owner');
  });

  it('lets only an admin key try an unrecorded id, and gives it nobody else’s', () => {
    expect(accessOf(undefined, key('ka'))).toBe('refused');
    expect(accessOf(undefined, key('ops', { admin: true }))).toBe('unrecorded');
    expect(accessOf(response('resp_1'), key('ops', { admin: true }))).toBe('refused');
  });
});
