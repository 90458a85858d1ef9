/** `text` with every character a RegExp gives meaning to escaped: it matches itself. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
