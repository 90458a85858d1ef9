import { Injectable } from '@nestjs/common';
import { own, setOwn } from '../../common/own';

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
    this.countsOf(name);
  }

  record(name: string, verdict: ProtectionVerdict): void {
    this.countsOf(name)[verdict]++;
  }

  /** A second-stage or shadow model call that failed (timeout, upstream error, no verdict). */
  recordError(name: string): void {
    this.countsOf(name).errors++;
  }

  private countsOf(name: string): ProtectionsHealthSnapshot[string] {
    let counts = own(this.counts, name);
    if (counts === undefined) {
      counts = zero();
      setOwn(this.counts, name, counts);
    }
    return counts;
  }

  snapshot(): ProtectionsHealthSnapshot {
    return Object.fromEntries(
      Object.entries(this.counts).map(([name, counts]) => [name, { ...counts }]),
    );
  }
}
