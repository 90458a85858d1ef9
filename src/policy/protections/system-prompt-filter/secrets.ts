import type { TextPart } from '../../../core/canonical';

/** `<secret>` / `</secret>`, any case, optional spaces before `>`. */
const TAG = /<(\/?)secret\s*>/gi;

/** A piece of a span still open at the end of a part. */
interface Segment {
  text: string;
  /** From this part's first opening tag: what an unclosed span protects of this part. */
  own: string | undefined;
}

/**
 * Strips `<secret>…</secret>` markers from the system parts IN PLACE (the text between
 * stays) and returns the marked spans; when nothing is marked, returns the whole system text
 * (parts joined by "\n"). A span may run across parts (a prompt split into blocks): what lies
 * between its tags is one secret, parts joined by "\n". Empty or whitespace-only secrets are
 * left out. A `<secret>` that no later tag closes marks the rest of its part only; nested tags
 * count depth, stray closing tags are dropped.
 */
export function takeSecrets(system: TextPart[]): string[] {
  const spans: string[] = [];
  let marked = false;
  let depth = 0;
  /** The span open across parts, one segment per part so far. */
  let open: Segment[] = [];
  for (const part of system) {
    if (!part.text.includes('<') || !/<\/?secret\s*>/i.test(part.text)) {
      if (depth > 0) {
        open.push({ text: part.text, own: undefined });
      }
      continue;
    }
    let stripped = '';
    // A span carried from an earlier part starts at the beginning of this one.
    let spanStart = 0;
    let ownStart = -1;
    let last = 0;
    for (const match of part.text.matchAll(TAG)) {
      stripped += part.text.slice(last, match.index);
      last = match.index + match[0].length;
      if (match[1] === '') {
        marked = true;
        if (depth === 0) {
          spanStart = stripped.length;
          open = [];
        }
        if (ownStart < 0) {
          ownStart = stripped.length;
        }
        depth += 1;
      } else if (depth > 0) {
        depth -= 1;
        if (depth === 0) {
          const tail = stripped.slice(spanStart);
          spans.push([...open.map((s) => s.text), tail].join('\n'));
          open = [];
          ownStart = -1;
        }
      }
    }
    stripped += part.text.slice(last);
    if (depth > 0) {
      open.push({
        text: stripped.slice(spanStart),
        own: ownStart < 0 ? undefined : stripped.slice(Math.max(ownStart, spanStart)),
      });
    }
    part.text = stripped;
  }
  // Never closed: each opening tag marks the rest of its own part.
  for (const segment of open) {
    if (segment.own !== undefined) {
      spans.push(segment.own);
    }
  }
  if (!marked) {
    const whole = system.map((p) => p.text).join('\n');
    return whole.trim() === '' ? [] : [whole];
  }
  return spans.filter((s) => s.trim() !== '');
}
