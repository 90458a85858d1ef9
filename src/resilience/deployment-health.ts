/** A deployment's breaker state, as /health/upstreams and the metrics show it. */
export type BreakerState = 'closed' | 'open' | 'half_open';

/** When a deployment is ejected and for how long (Envoy's outlier detection, simplified). */
export interface BreakerSettings {
  /** Consecutive retryable failures that eject it. */
  consecutiveFailures: number;
  /** Failure rate over the last `window` outcomes that ejects it (with at least `window` outcomes). */
  failureRate: number;
  window: number;
  /** First ejection's cooldown; each further ejection doubles it, up to `maxCooldownMs`. */
  cooldownMs: number;
  maxCooldownMs: number;
}

export const DEFAULT_BREAKER: BreakerSettings = {
  consecutiveFailures: 5,
  failureRate: 0.5,
  window: 20,
  cooldownMs: 5_000,
  maxCooldownMs: 300_000,
};

/**
 * Health of one deployment (a model on one provider): requests in flight for the load
 * balancer, and a breaker. Open, it takes no traffic until its cooldown ends; then it is
 * half-open and lets one probe through, whose outcome closes it or opens it again for a
 * longer cooldown. Single-threaded, so plain fields suffice.
 */
export class DeploymentHealth {
  inFlight = 0;
  state: BreakerState = 'closed';
  ejections = 0;
  openUntil = 0;
  private consecutive = 0;
  private probing = false;
  /** Ring of recent outcomes (true = failure) for the error rate. */
  private readonly recent: boolean[] = [];
  private cursor = 0;

  constructor(
    readonly key: string,
    readonly model: string,
    readonly provider: string,
    private readonly settings: BreakerSettings,
    private readonly onTransition: (health: DeploymentHealth, from: BreakerState) => void,
    /**
     * Whether another deployment of the model could take its traffic: Envoy's
     * `max_ejection_percent`, so that the last healthy deployment is never ejected into a
     * hard failure (it keeps serving, degraded, and keeps being retried).
     */
    private readonly mayEject: () => boolean = () => true,
  ) {}

  /** Whether it may take a request now (an open breaker past its cooldown turns half-open). */
  available(now: number): boolean {
    if (this.state === 'open' && now >= this.openUntil) {
      this.move('half_open');
    }
    return this.state === 'closed' || (this.state === 'half_open' && !this.probing);
  }

  /** Marks a request as sent to it (the half-open probe, when half-open). */
  started(): void {
    this.inFlight++;
    if (this.state === 'half_open') {
      this.probing = true;
    }
  }

  /** The request left (its answer ended, or it failed): no longer in flight. */
  released(): void {
    this.inFlight--;
  }

  /** The deployment answered (an error no retry fixes counts too: it is reachable). */
  succeeded(): void {
    this.probing = false;
    this.record(false);
    this.consecutive = 0;
    if (this.state !== 'closed') {
      this.move('closed');
    }
  }

  /**
   * The attempt ended without the deployment's answer deciding anything: the gateway
   * refused the request itself (a 400 of its own checks) or the client left. Neither a
   * success nor a failure, so a half-open probe may go out again.
   */
  abandoned(): void {
    this.probing = false;
  }

  /** It failed in a way a retry may fix: counts towards ejection. */
  failed(now: number): void {
    this.probing = false;
    this.record(true);
    this.consecutive++;
    if ((this.state === 'half_open' || this.tripped()) && this.mayEject()) {
      this.eject(now);
    } else if (this.state === 'half_open') {
      this.move('closed');
    }
  }

  private tripped(): boolean {
    if (this.state !== 'closed') {
      return false;
    }
    if (this.consecutive >= this.settings.consecutiveFailures) {
      return true;
    }
    if (this.recent.length < this.settings.window) {
      return false;
    }
    const failures = this.recent.reduce((n, failed) => n + (failed ? 1 : 0), 0);
    return failures / this.recent.length >= this.settings.failureRate;
  }

  private eject(now: number): void {
    const cooldown = Math.min(
      this.settings.maxCooldownMs,
      this.settings.cooldownMs * 2 ** Math.min(this.ejections, 30),
    );
    this.ejections++;
    this.openUntil = now + cooldown;
    this.consecutive = 0;
    this.recent.length = 0;
    this.cursor = 0;
    this.move('open');
  }

  private record(failed: boolean): void {
    if (this.recent.length < this.settings.window) {
      this.recent.push(failed);
    } else {
      this.recent[this.cursor] = failed;
      this.cursor = (this.cursor + 1) % this.settings.window;
    }
  }

  private move(to: BreakerState): void {
    const from = this.state;
    this.state = to;
    this.onTransition(this, from);
  }
}
