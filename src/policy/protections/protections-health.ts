import { Injectable } from '@nestjs/common';
import { PROTECTION_TOOLS, type ProtectionToolName } from './protection-facts';

/** A protection's verdict on one request, as counted. */
export type ProtectionVerdict = 'pass' | 'flagged' | 'blocked' | 'redacted';

/** Per protection: how many requests it passed, flagged, redacted, blocked; judge errors. */
export type ProtectionsHealthSnapshot = Record<
  ProtectionToolName,
  Record<ProtectionVerdict | 'errors', number>
>;

/** Verdict counters of the protections, served at `GET /health/protections`. */
@Injectable()
export class ProtectionsHealth {
  private readonly counts = Object.fromEntries(
    PROTECTION_TOOLS.map((name) => [
      name,
      { pass: 0, flagged: 0, redacted: 0, blocked: 0, errors: 0 },
    ]),
  ) as ProtectionsHealthSnapshot;

  record(name: ProtectionToolName, verdict: ProtectionVerdict): void {
    this.counts[name][verdict]++;
  }

  /** A second-stage or shadow model call that failed (timeout, upstream error, no verdict). */
  recordError(name: ProtectionToolName): void {
    this.counts[name].errors++;
  }

  snapshot(): ProtectionsHealthSnapshot {
    return Object.fromEntries(
      Object.entries(this.counts).map(([name, counts]) => [name, { ...counts }]),
    ) as ProtectionsHealthSnapshot;
  }
}
