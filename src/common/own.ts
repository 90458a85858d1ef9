/**
 * Property access for keys that come from a client or an upstream. An ordinary object
 * answers `obj["constructor"]`, `obj["valueOf"]` or `obj["__proto__"]` from
 * Object.prototype, and an assignment to `obj["__proto__"]` swaps its prototype; these
 * helpers see own properties only. The lint rule `local/no-inherited-lookup` sends every
 * string-keyed lookup of plain-object tables through here (or a Map).
 */

/** `table[key]` when `key` is the table's own property, else undefined. */
export function own<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  // eslint-disable-next-line local/no-inherited-lookup -- guarded by Object.hasOwn
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Sets `table[key]` as an own data property, even for `__proto__`. */
export function setOwn<V>(table: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__') {
    Object.defineProperty(table, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    // eslint-disable-next-line local/no-inherited-lookup -- '__proto__' handled above
    table[key] = value;
  }
}

/**
 * Whether a client-sent name is one of Object.prototype's (`__proto__`, `constructor`,
 * `toString`...): as a `type` it names nothing the gateway knows, and it must never reach a
 * lookup that an ordinary object would answer from its prototype.
 */
export function isPrototypeName(name: string): boolean {
  return Object.hasOwn(Object.prototype, name);
}
