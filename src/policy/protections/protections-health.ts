import { Injectable } from '@nestjs/common';

export type ProtectionVerdict = 'pass' | 'flagged' | 'blocked';

export interface ProtectionsHealthSnapshot {
  prompt_injection_protection: Record<ProtectionVerdict, number>;
}

/** Verdict counters of the protections, served at `GET /health/protections`. */
@Injectable()
export class ProtectionsHealth {
  private readonly injection: Record<ProtectionVerdict, number> = {
    pass: 0,
    flagged: 0,
    blocked: 0,
  };

  record(verdict: ProtectionVerdict): void {
    this.injection[verdict]++;
  }

  snapshot(): ProtectionsHealthSnapshot {
    return { prompt_injection_protection: { ...this.injection } };
  }
}
