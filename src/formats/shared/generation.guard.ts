import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CatalogService } from '../../catalog/catalog.service';
import { MissingSystemPromptError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { WireFormat } from '../../core/canonical';
import type { LimitsExtractor } from '../../limits/limit-facts';
import { LimitsService } from '../../limits/limits.service';
import { REQUEST_LIMITS } from '../../limits/request-limits.guard';
import type { ProtectionExtractor } from '../../policy/protections/protection-facts';
import { TracingService } from '../../observability/tracing/tracing.service';
import { ProtectionsGate } from '../../policy/protections/protections.gate';
import { OutputProtections } from '../../policy/protections/output-protections';
import type { SystemPromptCheck } from '../../policy/system-prompt.rule';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { rememberRoute, routeGeneration } from './canonical-path';
import type { GenerationBody } from './generation.adapter';

/**
 * What the admission of a generation request needs from its wire format: pure functions
 * over the body, each living in the format's folder.
 */
export interface GenerationFacts<B extends GenerationBody = GenerationBody> {
  format: WireFormat;
  /** Validates the body in place (no copy) and types it; throws the 400. */
  validate(body: unknown): B;
  /** Rule S1 for the format. */
  systemPrompt: SystemPromptCheck;
  /** What the request and rate limits count. */
  limits: LimitsExtractor;
  /** Where the protection tools and the scanned parts are. */
  protections: ProtectionExtractor;
}

const GENERATION = 'gateway:generation';

/**
 * Admits a generation request with its format's facts. The request limits reading
 * `requestLimitsOf` see the format's limits extractor.
 */
export const Generation = (facts: GenerationFacts): MethodDecorator =>
  applyDecorators(
    SetMetadata(GENERATION, facts),
    SetMetadata(REQUEST_LIMITS, facts.limits),
    UseGuards(GenerationGuard),
  );

/**
 * Admission of a generation request, cheapest refusal first (auth ran before, globally):
 * the model and whether this endpoint serves it (404/400/503); the body's validity and
 * rule S1 (400); the protections' settings, which strip the protection tools (400); the
 * serving path (400 when no path serves the model here), decided once for the pipeline; the
 * request and rate limits (400/429); then the protections' checks, the local stages before
 * any paid model call. Nothing costs quota or a model call before the free checks passed.
 */
@Injectable()
export class GenerationGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly catalog: CatalogService,
    private readonly limits: LimitsService,
    private readonly protections: ProtectionsGate,
    private readonly tracing: TracingService,
    private readonly providers: ProviderRegistry,
    private readonly outputs: OutputProtections,
  ) {}

  canActivate(context: ExecutionContext): true | Promise<true> {
    const facts = this.reflector.get<GenerationFacts | undefined>(GENERATION, context.getHandler());
    if (!facts) {
      return true;
    }
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const res = http.getResponse<GatewayResponse>();
    const body: unknown = req.body;
    const id = (body as { model?: unknown } | null)?.model;
    // A body without a model string is validation's 400 below.
    const resolved = typeof id === 'string' ? this.catalog.resolve(id, facts.format) : undefined;
    const valid = facts.validate(body);
    const violation = facts.systemPrompt(body);
    if (violation) {
      throw new MissingSystemPromptError(violation.message, violation.param);
    }
    const plan = this.protections.plan(facts.protections, req, res);
    // The serving path, decided once: the pipeline serves what is decided here.
    rememberRoute(
      req,
      routeGeneration(
        resolved ?? this.catalog.resolve(valid.model, facts.format),
        this.providers,
        this.outputs.active(req),
        facts.format,
        valid,
        req,
      ),
    );
    const admit = (): true | Promise<true> =>
      this.limits.admit(facts.limits(body, req.query), req, res);
    const admitted = this.tracing.enabled
      ? this.tracing.step(req, 'gateway.limits', admit)
      : admit();
    if (plan === undefined) {
      return admitted;
    }
    const check = (): true | Promise<true> =>
      this.protections.check(plan, facts.protections, req, res);
    const checked = (): true | Promise<true> =>
      this.tracing.enabled ? this.tracing.step(req, 'gateway.protections', check) : check();
    return admitted === true ? checked() : admitted.then(checked);
  }
}
