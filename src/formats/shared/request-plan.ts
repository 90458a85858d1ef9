import { type ExecutionContext, createParamDecorator } from '@nestjs/common';
import type { ApiKeyInfo } from '../../common/key-policy';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { Admission } from '../../limits/limits.service';
import type { ProtectionPlan } from '../../policy/protections/protections.gate';
import type { GenerationRoute } from './canonical-path';
import type { GenerationAdapter, GenerationBody } from './generation.adapter';
import type { WireFormatDescriptor } from './wire-format';

/**
 * Everything admission decided about one generation request, made once by the generation
 * guard and frozen: the pipeline and every attempt read it and never change it. An attempt
 * derives the body it sends upstream from `body` (a copy when it rewrites a field), so a
 * retry or a fallback starts from the same plan as the first attempt did.
 */
export interface RequestPlan<B extends GenerationBody = GenerationBody> {
  /** The wire format, named once by the endpoint's `@Generation(format)`. */
  readonly format: WireFormatDescriptor<B>;
  /** Its adapter (`format.adapter`). */
  readonly adapter: GenerationAdapter<B>;
  /** The client's body as received and validated (frozen: nothing writes to it). */
  readonly received: Readonly<B>;
  /**
   * What goes upstream: `received` without the gateway's own fields (protection tools,
   * OpenRouter's `models`); `received` itself when it had none. Frozen.
   */
  readonly body: Readonly<B>;
  /**
   * Whether admission resolved and checked the conversation state the body names (see
   * ConversationState): `body` then holds the history.
   */
  readonly stateResolved: boolean;
  /** The client's bytes, while they say exactly `body` (undefined once admission took fields out). */
  readonly raw: Buffer | undefined;
  /** The requested model, its provider and serving path, decided once. */
  readonly route: GenerationRoute;
  /** The models that may serve, in order: the requested one (or the context-window fallback) first. */
  readonly models: readonly CatalogModel[];
  /** The key that keeps one conversation on one deployment (see sticky-key.ts). */
  readonly sticky: string | undefined;
  /** The protections turned on for the request; undefined when none is. */
  readonly protections: ProtectionPlan | undefined;
  /** What the limits handed on (the context-window fallback, when one was taken). */
  readonly admission: Admission;
  /** The client's key as authenticated (undefined when the gateway runs without keys). */
  readonly key: ApiKeyInfo | undefined;
  readonly req: GatewayRequest;
  readonly res: GatewayResponse;
}

/** A request the generation guard admitted: it carries its plan. */
export type PlannedRequest = GatewayRequest & { plan?: RequestPlan };

/**
 * The body sent upstream with `model` as its model id and `extra` fields over the plan's,
 * serialized: the client's own bytes when nothing differs (the common case costs no
 * stringify), else one shallow copy. The plan's body is never changed.
 */
export function upstreamPayload(
  plan: RequestPlan,
  model: string,
  extra?: Record<string, unknown>,
): string | Buffer {
  if (extra === undefined && model === plan.body.model && plan.raw !== undefined) {
    return plan.raw;
  }
  return JSON.stringify({ ...plan.body, model, ...extra });
}

/**
 * Lets a stream's request body go once its upstream answer has started: no attempt is left
 * to send it again, and a stream may run for minutes while an agent's body is often hundreds
 * of kilobytes (the parsed objects, and the client's bytes a second time). Only the model
 * the client named is kept, for the ledger. Whatever an attempt still needs (an encoder's
 * echo of the request, the response store's input items, a cache capture) it holds itself.
 */
export function releaseBody(req: PlannedRequest): void {
  const model = (req.body as { model?: unknown } | undefined)?.model;
  if (typeof model === 'string') {
    req.ctx.modelAsked = model;
  }
  req.body = undefined;
  req.rawBody = undefined;
  req.plan = undefined;
}

/** The plan of an admitted generation request (handler parameter). */
export const Planned = createParamDecorator((_data: unknown, context: ExecutionContext) => {
  const plan = context.switchToHttp().getRequest<PlannedRequest>().plan;
  if (plan === undefined) {
    throw new Error('generation request served without the generation guard');
  }
  return plan;
});
