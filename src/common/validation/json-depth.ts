const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether the JSON text nests objects and arrays deeper than `max`, read from the bytes
 * before parsing. JSON.parse accepts any depth, but JSON.stringify, structured clone and
 * every recursive walk of the gateway overflow the stack on a body of a few hundred KB
 * of brackets, so such a body is refused up front. Strings are skipped with indexOf, so
 * the cost is mostly that of the few bytes outside strings.
 */
export function exceedsJsonDepth(buf: Uint8Array, max: number): boolean {
  let depth = 0;
  let i = 0;
  const n = buf.length;
  while (i < n) {
    const c = buf[i];
    if (c === QUOTE) {
      i = endOfString(buf, i + 1);
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) {
        return true;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
    i++;
  }
  return false;
}

/** Index of the quote that closes the string whose content starts at `from` (or the end). */
function endOfString(buf: Uint8Array, from: number): number {
  let i = from;
  for (;;) {
    const quote = buf.indexOf(QUOTE, i);
    if (quote < 0) {
      return buf.length;
    }
    // A quote preceded by an odd run of backslashes is escaped.
    let slashes = 0;
    while (quote - 1 - slashes >= from && buf[quote - 1 - slashes] === BACKSLASH) {
      slashes++;
    }
    if (slashes % 2 === 0) {
      return quote;
    }
    i = quote + 1;
  }
}
