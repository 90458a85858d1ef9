import { Injectable } from '@nestjs/common';
import { detectInjection } from '../detector';
import type { BackendPart, BackendVerdict, InjectionDetectorBackend } from './detector-backend';
import { RegisterInjectionDetector } from './detector-backend';

/** The built-in trained model (detector.ts): in process, synchronous, no network. */
@RegisterInjectionDetector(true)
@Injectable()
export class LocalDetector implements InjectionDetectorBackend {
  readonly name = 'local';
  readonly remote = false;

  check(): void {
    // Always usable: the weights are checked at boot.
  }

  score(parts: readonly BackendPart[]): BackendVerdict[] {
    return parts.map(({ text, source }) => {
      const { score, signals } = detectInjection(text, { source });
      return { score, signals };
    });
  }
}
