/**
 * Envoy's retry budget: retries in flight may be at most `ratio` of the requests in flight
 * (with a floor of `minRetries`, so that a quiet gateway can still retry), so that during
 * an outage retries add at most ~20% load instead of multiplying it.
 */
export class RetryBudget {
  private requests = 0;
  private retries = 0;

  constructor(
    private readonly ratio = 0.2,
    private readonly minRetries = 3,
  ) {}

  requestStarted(): void {
    this.requests++;
  }

  requestEnded(): void {
    this.requests--;
  }

  /** Takes a retry from the budget; false when it is spent. Give it back with {@link retryEnded}. */
  tryRetry(): boolean {
    if (this.retries >= Math.max(this.minRetries, this.requests * this.ratio)) {
      return false;
    }
    this.retries++;
    return true;
  }

  retryEnded(): void {
    this.retries--;
  }
}
