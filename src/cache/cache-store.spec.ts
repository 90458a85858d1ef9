import { MemoryCacheStore } from './cache-store';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('MemoryCacheStore', () => {
  it('returns an entry until its ttl passed, then nothing', async () => {
    const store = new MemoryCacheStore(1 << 20, 100);
    store.set('k', 'value', 40);
    expect(store.get('k')).toBe('value');
    await sleep(60);
    expect(store.get('k')).toBeUndefined();
  });

  it('keeps at most its number of entries, least recently used evicted first', () => {
    const store = new MemoryCacheStore(1 << 20, 2);
    store.set('a', '1', 60_000);
    store.set('b', '2', 60_000);
    store.get('a');
    store.set('c', '3', 60_000);
    expect(store.get('a')).toBe('1');
    expect(store.get('b')).toBeUndefined();
    expect(store.get('c')).toBe('3');
    expect(store.usage.entries).toBe(2);
  });

  it('keeps its entries within its size bound, counting two bytes a character', () => {
    const store = new MemoryCacheStore(2048, 1000);
    for (let i = 0; i < 10; i++) {
      store.set(`k${i}`, 'x'.repeat(300), 60_000);
    }
    expect(store.usage.bytes).toBeLessThanOrEqual(2048);
    expect(store.usage.entries).toBe(3);
    expect(store.get('k9')).toBe('x'.repeat(300));
    expect(store.get('k0')).toBeUndefined();
  });
});
