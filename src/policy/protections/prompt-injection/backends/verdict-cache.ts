import { createHash } from 'node:crypto';

/**
 * Remote detector verdicts by text, bounded (least recently used out first). Keys are
 * SHA-256 digests of backend, model and text, so the cache never holds the text itself;
 * only verdicts that arrived are kept (a failure is asked again next time).
 */
export class VerdictCache {
  private readonly entries = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** The key of `text` as scored by `backend` (with its model, if it names one). */
  static key(backend: string, model: string | undefined, text: string): string {
    return createHash('sha256')
      .update(backend)
      .update('\0')
      .update(model ?? '')
      .update('\0')
      .update(text)
      .digest('base64');
  }

  get(key: string): number | undefined {
    const score = this.entries.get(key);
    if (score !== undefined) {
      // Re-inserting moves it to the most recent end of the Map's order.
      this.entries.delete(key);
      this.entries.set(key, score);
    }
    return score;
  }

  set(key: string, score: number): void {
    if (this.capacity === 0) {
      return;
    }
    this.entries.delete(key);
    this.entries.set(key, score);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
