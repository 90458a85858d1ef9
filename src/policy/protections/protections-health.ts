import { Injectable } from '@nestjs/common';

/** A protection's verdict on one request, as counted. */
export type ProtectionVerdict = 'pass' | 'flagged' | 'blocked' | 'redacted';

/** Per protection: how many requests it passed, flagged, redacted, blocked; judge errors. */
export type ProtectionsHealthSnapshot = Record<
  string,
  Record<ProtectionVerdict | 'errors', number>
>;

const zero = (): Record<ProtectionVerdict | 'errors', number> => ({
  pass: 0,
  flagged: 0,
  redacted: 0,
  blocked: 0,
  errors: 0,
});

/** Verdict counters of the protections, served at `GET /health/protections`. */
@Injectable()
export class ProtectionsHealth {
  private readonly counts: ProtectionsHealthSnapshot = {};

  /** Lists a protection with zero counts (the registry does it at boot). */
  register(name: string): void {
    this.counts[name] ??= zero();
  }

  record(name: string, verdict: ProtectionVerdict): void {
    (this.counts[name] ??= zero())[verdict]++;
  }

  /** A second-stage or shadow model call that failed (timeout, upstream error, no verdict). */
  recordError(name: string): void {
    (this.counts[name] ??= zero()).errors++;
  }

  snapshot(): ProtectionsHealthSnapshot {
    return Object.fromEntries(
      Object.entries(this.counts).map(([name, counts]) => [name, { ...counts }]),
    );
  }
}
