import type { TextPart } from '../../../core/canonical';

/** `<secret>` / `</secret>`, any case, optional spaces before `>`. */
const TAG = /<(\/?)secret\s*>/gi;

/**
 * Strips `<secret>…</secret>` markers from the system parts IN PLACE (the text between
 * stays) and returns the marked spans; when nothing is marked, returns the whole system text
 * (parts joined by "\n"). Empty or whitespace-only secrets are left out. An unclosed
 * `<secret>` marks the rest of its part; nested tags count depth, stray closing tags are
 * dropped.
 */
export function takeSecrets(system: TextPart[]): string[] {
  const spans: string[] = [];
  let marked = false;
  for (const part of system) {
    if (!part.text.includes('<') || !/<\/?secret\s*>/i.test(part.text)) {
      continue;
    }
    let stripped = '';
    let depth = 0;
    let spanStart = 0;
    let last = 0;
    for (const match of part.text.matchAll(TAG)) {
      stripped += part.text.slice(last, match.index);
      last = match.index + match[0].length;
      if (match[1] === '') {
        marked = true;
        if (depth === 0) {
          spanStart = stripped.length;
        }
        depth += 1;
      } else if (depth > 0) {
        depth -= 1;
        if (depth === 0) {
          spans.push(stripped.slice(spanStart));
        }
      }
    }
    stripped += part.text.slice(last);
    if (depth > 0) {
      spans.push(stripped.slice(spanStart));
    }
    part.text = stripped;
  }
  if (!marked) {
    const whole = system.map((p) => p.text).join('\n');
    return whole.trim() === '' ? [] : [whole];
  }
  return spans.filter((s) => s.trim() !== '');
}
