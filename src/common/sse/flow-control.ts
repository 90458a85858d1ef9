/**
 * Backpressure between the SSE writer (which sees `res.write` return false) and the
 * source producing frames (an upstream socket, or the local model's token clock).
 * The writer pauses and resumes; the source either listens or awaits `ready()`.
 */
export class FlowControl {
  private paused = false;
  private waiters: (() => void)[] = [];
  private listeners: { pause(): void; resume(): void }[] | undefined = undefined;

  get isPaused(): boolean {
    return this.paused;
  }

  pause(): void {
    if (this.paused) {
      return;
    }
    this.paused = true;
    for (const l of this.listeners ?? []) {
      l.pause();
    }
  }

  resume(): void {
    if (!this.paused) {
      return;
    }
    this.paused = false;
    for (const l of this.listeners ?? []) {
      l.resume();
    }
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) {
      w();
    }
  }

  /** Resolves at once when flowing, otherwise when the consumer drains. */
  ready(): Promise<void> {
    return this.paused ? new Promise((resolve) => this.waiters.push(resolve)) : Promise.resolve();
  }

  /** Registers a source that can pause itself (e.g. a readable stream). */
  attach(listener: { pause(): void; resume(): void }): void {
    // A literal holds the usual one source exactly (`[]` grown by push() reserves 17 slots
    // for the whole stream).
    if (this.listeners === undefined) {
      this.listeners = [listener];
    } else {
      this.listeners.push(listener);
    }
    if (this.paused) {
      listener.pause();
    }
  }
}
