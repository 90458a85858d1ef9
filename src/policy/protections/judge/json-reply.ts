import { isRecord } from '../../../common/json-read';

/** A judge's answer is short; text beyond this is not scanned. */
const MAX_REPLY_CHARS = 20_000;

/** The top-level `{...}` spans of a text (strings and escapes respected). */
function* objectSpans(text: string): Generator<string> {
  let i = text.indexOf('{');
  while (i >= 0) {
    let depth = 0;
    let inString = false;
    let escaped = false;
    let end = -1;
    for (let j = i; j < text.length; j++) {
      const c = text[j];
      if (inString) {
        if (escaped) {
          escaped = false;
        } else if (c === '\\') {
          escaped = true;
        } else if (c === '"') {
          inString = false;
        }
      } else if (c === '"') {
        inString = true;
      } else if (c === '{') {
        depth++;
      } else if (c === '}') {
        depth--;
        if (depth === 0) {
          end = j;
          break;
        }
      }
    }
    if (end < 0) {
      // Unbalanced from here: a later brace may still open a whole object.
      i = text.indexOf('{', i + 1);
      continue;
    }
    yield text.slice(i, end + 1);
    i = text.indexOf('{', end + 1);
  }
}

/**
 * The JSON objects a model's reply holds, in order: models wrap the object they were
 * asked for in code fences or prose, so every balanced top-level `{...}` that parses counts.
 */
export function jsonObjectsIn(text: string): Record<string, unknown>[] {
  const found: Record<string, unknown>[] = [];
  for (const span of objectSpans(text.slice(0, MAX_REPLY_CHARS))) {
    try {
      const parsed: unknown = JSON.parse(span);
      if (isRecord(parsed)) {
        found.push(parsed);
      }
    } catch {
      // prose in braces, or a half-written object: not an answer
    }
  }
  return found;
}

/** The first JSON object of a model's reply, if any (code fences and prose tolerated). */
export function extractJsonObject(text: string): Record<string, unknown> | undefined {
  return jsonObjectsIn(text)[0];
}
