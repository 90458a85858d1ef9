import {
  type CanActivate,
  type ExecutionContext,
  Inject,
  Injectable,
  Optional,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { CatalogService } from '../../catalog/catalog.service';
import { type ApiKeyInfo, keyMayUseModel } from '../../common/key-policy';
import {
  MissingSystemPromptError,
  PermissionDeniedError,
} from '../../common/errors/gateway-errors';
import type { GatewayResponse } from '../../common/request-context';
import type { WireFormat } from '../../core/canonical';
import type { LimitFacts, LimitsExtractor } from '../../limits/limit-facts';
import { type Admission, LimitsService } from '../../limits/limits.service';
import { REQUEST_LIMITS } from '../../limits/request-limits.guard';
import type { ProtectionExtractor } from '../../policy/protections/protection-facts';
import { TracingService } from '../../observability/tracing/tracing.service';
import { ProtectionsGate } from '../../policy/protections/protections.gate';
import { OutputProtections } from '../../policy/protections/output-protections';
import type { SystemPromptCheck } from '../../policy/system-prompt.rule';
import { ProviderRegistry } from '../../upstream/provider-registry';
import { FallbackPlan, askedFallbacks } from '../../resilience/fallback-plan';
import { stickyKeyOf } from '../../resilience/sticky-key';
import { isCrossFormat, routeGeneration } from './canonical-path';
import { CONVERSATION_STATE, type ConversationState } from './conversation-state';
import type { GenerationBody } from './generation.adapter';
import type { WireFormatDescriptor } from './wire-format';
import type { PlannedRequest, RequestPlan } from './request-plan';

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
 * Admits a generation request of `format` with its adapter; the handler takes the frozen
 * {@link RequestPlan} with `@Planned()`. The request limits reading `requestLimitsOf` see
 * the format's limits extractor.
 */
export const Generation = <B extends GenerationBody>(
  format: WireFormatDescriptor<B>,
): MethodDecorator =>
  applyDecorators(
    SetMetadata(GENERATION, format),
    SetMetadata(REQUEST_LIMITS, format.adapter.limits),
    UseGuards(GenerationGuard),
  );

/**
 * Admission of a generation request, cheapest refusal first (auth ran before, globally):
 * the model and whether this endpoint serves it (404/400/503); the body's validity and
 * rule S1 (400); the protections' settings, which strip the protection tools (400); the
 * serving path (400 when no path serves the model here), decided once for the pipeline; the
 * key's model scope (403); the request limits, budget and rate limits (400/429); then the protections' checks, the local stages before
 * any paid model call. Nothing costs quota or a model call before the free checks passed.
 * What it decided becomes the request's frozen plan, with the fallbacks chosen here.
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
    private readonly fallbacks: FallbackPlan,
    @Optional()
    @Inject(CONVERSATION_STATE)
    private readonly state: ConversationState | undefined,
  ) {}

  canActivate(context: ExecutionContext): true | Promise<true> {
    const format = this.reflector.get<WireFormatDescriptor | undefined>(
      GENERATION,
      context.getHandler(),
    );
    if (!format) {
      return true;
    }
    const facts = format.adapter;
    const http = context.switchToHttp();
    const req = http.getRequest<PlannedRequest>();
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
    const protections = this.protections.plan(facts.protections, req, res);
    // The serving path, decided once: the pipeline serves what is decided here.
    const route = routeGeneration(
      resolved ?? this.catalog.resolve(valid.model, facts.format),
      this.providers,
      this.outputs.active(protections),
      facts.format,
      valid,
      req,
    );
    Object.freeze(valid);
    const sent = withoutGatewayFields(protections?.stripped ?? valid);
    const asked = askedFallbacks(req, valid);
    checkModelScope(req.ctx.key, valid.model);
    // A client of another format cannot know the model's output limit (see LimitFacts).
    const translated = isCrossFormat(facts.format, route.model, route.provider);
    /** Admission of `body`, the body that goes upstream, once its conversation is known. */
    const admitBody = (body: GenerationBody, stateResolved: boolean): true | Promise<true> => {
      const plan = (admission: Admission): RequestPlan => {
        req.plan = Object.freeze({
          format,
          adapter: facts,
          received: valid,
          body,
          stateResolved,
          raw: body === valid ? req.rawBody : undefined,
          route,
          models: this.fallbacks.candidates(
            route.model,
            req.ctx.key,
            facts.format,
            asked,
            admission.contextFallback,
          ),
          sticky: stickyKeyOf(req, valid),
          protections,
          admission,
          key: req.ctx.key,
          req,
          res,
        });
        return req.plan;
      };
      const admit = (): Admission | Promise<Admission> =>
        this.limits.admit(limitFacts(facts.limits(body, req.query), translated), req, res, {
          asked,
          contextFallback: (fits) =>
            this.fallbacks.contextFallback(route.model, req.ctx.key, format.name, fits),
          ...(protections === undefined
            ? {}
            : { protections: (chars: number) => this.protections.worstCase(protections, chars) }),
        });
      const admitted = this.tracing.enabled
        ? this.tracing.step(req, 'gateway.limits', admit)
        : admit();
      if (protections === undefined) {
        if (admitted instanceof Promise) {
          return admitted.then((a) => (plan(a), true));
        }
        plan(admitted);
        return true;
      }
      const check = (): true | Promise<true> =>
        this.protections.check(protections, facts.protections, req, res, body);
      const checked = (a: Admission): true | Promise<true> => {
        plan(a);
        return this.tracing.enabled
          ? this.tracing.step(req, 'gateway.protections', check)
          : check();
      };
      return admitted instanceof Promise ? admitted.then(checked) : checked(admitted);
    };
    // Server-held history is read here, once, so that everything below counts all of it;
    // a request that names none pays nothing.
    if (this.state?.names(sent) === true) {
      return this.state.resolve(sent, req.ctx.key, route).then((body) => admitBody(body, true));
    }
    return admitBody(sent, false);
  }
}

/**
 * The body without OpenRouter's `models` array (the gateway's to read, not the upstream's):
 * a frozen copy when it has one, else the body itself.
 */
function withoutGatewayFields<B extends GenerationBody>(body: B | Record<string, unknown>): B {
  if (!Object.hasOwn(body, 'models')) {
    return Object.isFrozen(body) ? (body as B) : (Object.freeze(body) as B);
  }
  const { models: _models, ...rest } = body as Record<string, unknown>;
  return Object.freeze(rest) as unknown as B;
}

function limitFacts(facts: LimitFacts, translated: boolean): LimitFacts {
  if (translated) {
    facts.clampMaxOutput = true;
  }
  return facts;
}

/** 403 when the key is scoped to models and the request names another. */
function checkModelScope(key: ApiKeyInfo | undefined, model: string): void {
  if (!keyMayUseModel(key, model)) {
    throw new PermissionDeniedError(
      `This API key may not use the model '${model}'.`,
      'model_not_allowed',
      'model',
    );
  }
}
