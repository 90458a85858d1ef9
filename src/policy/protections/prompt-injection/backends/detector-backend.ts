import { DiscoveryService } from '@nestjs/core';
import { GatewayError } from '../../../../common/errors/gateway-errors';
import type { GatewayRequest } from '../../../../common/request-context';
import type { InjectionSignal, PartSource } from '../detector';
import type { InjectionSettings } from '../injection-settings';

/**
 * A prompt-injection detector backend: the built-in model (`local`), a guard model a
 * company serves over HTTP (`http`), a catalog model as judge (`judge`), or any other
 * provider marked with {@link RegisterInjectionDetector}. A request picks one by name with
 * its tool's `detector` setting (default PROMPT_INJECTION_DETECTOR); the check treats them
 * all alike, so adding one edits no other file.
 */
export interface InjectionDetectorBackend {
  /** The name a request's `detector` setting uses and `x-gateway-protections` reports. */
  readonly name: string;
  /**
   * A remote backend's verdicts are cached by text, bounded by a deadline, and subject to
   * the fail mode; the local model answers synchronously and cannot fail.
   */
  readonly remote: boolean;
  /** What else than the text decides a verdict (the judge's model): part of the cache key. */
  variant?(settings: InjectionSettings): string | undefined;
  /** Throws the 400 naming `param` when this request's settings cannot use the backend. */
  check(settings: InjectionSettings, param: string): void;
  /**
   * One verdict per part, in order. A remote backend rejects with DetectorBackendFailure
   * when it cannot give them all (timeout, HTTP error, an answer it cannot read).
   */
  score(
    parts: readonly BackendPart[],
    call: BackendCall,
  ): readonly BackendVerdict[] | Promise<readonly BackendVerdict[]>;
}

/** One text to score and what kind of content it is. */
export interface BackendPart {
  text: string;
  source: PartSource;
}

/** What a backend knows of the request it scores for. */
export interface BackendCall {
  settings: InjectionSettings;
  req: GatewayRequest;
  /** Aborted at the deadline or when the client goes away. */
  signal: AbortSignal;
  /** Epoch milliseconds by which every call must have answered. */
  deadline: number;
}

/** A backend's verdict on one text. */
export interface BackendVerdict {
  /** 0..1, compared with the request's threshold. */
  score: number;
  /** The features that raised it (the local model's; remote backends give none). */
  signals: InjectionSignal[];
}

export type BackendFailureKind = 'timeout' | 'unavailable' | 'bad_response' | 'aborted';

/** A remote backend gave no verdict. Its message never holds the scanned text. */
export class DetectorBackendFailure extends Error {
  constructor(
    readonly kind: BackendFailureKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DetectorBackendFailure';
  }
}

/** `fail_mode: closed` and the backend failed: the request is not let through unchecked. */
export class DetectorUnavailableError extends GatewayError {
  constructor(backend: string, kind: BackendFailureKind) {
    super(
      503,
      'server',
      `prompt_injection_protection: the '${backend}' detector gave no verdict (${kind}) and its fail mode is closed; retry later.`,
      { code: 'prompt_injection_detector_unavailable' },
    );
  }
}

/** Marks a provider as an injection detector backend (found by InjectionDetectors). */
export const RegisterInjectionDetector = DiscoveryService.createDecorator<true>();
