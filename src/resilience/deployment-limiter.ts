import type { DeploymentLimits } from '../catalog/catalog.types';
import type { CanonicalUsage } from '../core/canonical';

const MINUTE_MS = 60_000;
/** What a client is told to wait for a deployment full of concurrent requests: one ends soon. */
const CONCURRENT_WAIT_MS = 1_000;

/**
 * A deployment's own limits (catalog `limits`), counted in this process: each replica
 * holds its own share. Requests and tokens per minute are token buckets refilled
 * continuously (a full minute's worth at most), so a burst up to the limit passes and the
 * rest spreads over the minute. Tokens are those the upstream reported, counted when the
 * answer ends: a deployment over its tokens is skipped until the bucket is back above zero.
 */
export class DeploymentLimiter {
  private inFlight = 0;
  private requests: number;
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly limits: DeploymentLimits,
    now = Date.now(),
  ) {
    this.requests = limits.requestsPerMinute ?? 0;
    this.tokens = limits.tokensPerMinute ?? 0;
    this.refilledAt = now;
  }

  /** Milliseconds until it may take one more request: 0 when it may now. */
  waitMs(now: number): number {
    this.refill(now);
    const { maxConcurrent, requestsPerMinute: rpm, tokensPerMinute: tpm } = this.limits;
    let wait = 0;
    if (maxConcurrent !== undefined && this.inFlight >= maxConcurrent) {
      wait = CONCURRENT_WAIT_MS;
    }
    if (rpm !== undefined && this.requests < 1) {
      wait = Math.max(wait, Math.ceil(((1 - this.requests) * MINUTE_MS) / rpm));
    }
    if (tpm !== undefined && this.tokens <= 0) {
      wait = Math.max(wait, Math.ceil(((1 - this.tokens) * MINUTE_MS) / tpm));
    }
    return wait;
  }

  /** An attempt was sent to it. */
  acquire(): void {
    this.inFlight++;
    this.requests--;
  }

  /**
   * The attempt ended; `usage`: what the upstream reported for it, if it served. `refund`:
   * the upstream was never asked (the gateway refused the request itself), so the request
   * does not count against the deployment's requests per minute.
   */
  release(usage: CanonicalUsage | undefined, refund = false): void {
    this.inFlight--;
    if (refund) {
      this.requests++;
    }
    if (usage !== undefined) {
      this.tokens -= usage.inputTokens + usage.outputTokens;
    }
  }

  private refill(now: number): void {
    const elapsed = now - this.refilledAt;
    if (elapsed <= 0) {
      return;
    }
    this.refilledAt = now;
    const { requestsPerMinute: rpm, tokensPerMinute: tpm } = this.limits;
    if (rpm !== undefined) {
      this.requests = Math.min(rpm, this.requests + (elapsed * rpm) / MINUTE_MS);
    }
    if (tpm !== undefined) {
      this.tokens = Math.min(tpm, this.tokens + (elapsed * tpm) / MINUTE_MS);
    }
  }
}
