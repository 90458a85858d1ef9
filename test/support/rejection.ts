/** What `p` rejects with; fails the test when it resolves. Typed by the caller. */
export async function rejection<T = any>(p: Promise<unknown>): Promise<T> {
  try {
    await p;
  } catch (e) {
    return e as T;
  }
  throw new Error('expected the request to fail');
}
