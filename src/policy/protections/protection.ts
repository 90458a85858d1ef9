import type { MonoTypeOperatorFunction } from 'rxjs';
import { DiscoveryService } from '@nestjs/core';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { CanonicalEvent, CanonicalRequest } from '../../core/canonical';
import type { LabeledPart, ProtectionTool } from './protection-facts';
import type { ProtectionReport } from './protection-report';

/** What a protection sees of the request it protects. */
export interface ProtectionContext {
  req: GatewayRequest;
  res: GatewayResponse;
  /** Its verdict goes here (`report.set(name, verdict, details)`). */
  report: ProtectionReport;
}

/** What an outgoing protection sees: the decoded request and the model that answers it. */
export interface OutputContext extends ProtectionContext {
  request: CanonicalRequest;
  model: CatalogModel;
}

/**
 * A protection a request turns on with a function tool of its `name` (or the operator with
 * PROTECTIONS_FORCE). Implementations are Nest providers marked with
 * {@link RegisterProtection}; the guard and the services find them through the
 * ProtectionRegistry, so adding one edits no other file.
 */
export interface Protection<S = unknown> {
  readonly name: string;
  /**
   * Its settings, from the tool's parameter schema (undefined: forced on, defaults).
   * Throws the 400 naming a bad setting; runs for every protection before any of them acts.
   */
  settings(tool: ProtectionTool | undefined): S;
  /** Before the upstream call: may throw a typed error to block the request. */
  check?(settings: S, parts: () => LabeledPart[], ctx: ProtectionContext): Promise<void>;
  /**
   * On the way out: an operator over the answer's canonical events, streamed or not. Having
   * one puts the request on the canonical path. Called before the request goes upstream
   * (it may adjust `ctx.request`); must report its verdict by the time the events complete.
   */
  output?(settings: S, ctx: OutputContext): MonoTypeOperatorFunction<CanonicalEvent>;
  /**
   * The most its own model calls (a judge) may cost for one request, in pico-dollars, for a
   * budget to reserve when judge calls count against it; absent: it calls no priced model.
   * `promptChars`: characters of the request's prompt text, which bound what it scans.
   */
  worstCaseCost?(settings: S, promptChars: number): bigint;
}

/** Marks a provider as a protection; `order` sets the run order (lower first). */
export const RegisterProtection = DiscoveryService.createDecorator<{ order: number }>();
