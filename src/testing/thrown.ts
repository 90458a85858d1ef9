/** What `fn` throws, for specs that inspect a domain error; fails the spec when it returns. */
export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}
