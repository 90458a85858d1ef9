import { Injectable } from '@nestjs/common';
import type { Attributes } from '@opentelemetry/api';
import { CatalogService } from '../catalog/catalog.service';
import { costUsd } from '../catalog/cost';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import { MetricsService, type RequestFacts } from './metrics/metrics.service';
import { observeRequest, observedRequest } from '../common/observed-request';
import { traceOf } from './tracing/trace-of';
import { TracingService } from './tracing/tracing.service';

/** How the access log saw a response end. */
export interface RequestEnd {
  latencyMs: number;
  outcome: 'completed' | 'client_closed';
}

/**
 * The request-context middleware's hooks for metrics and traces: `started` as a request
 * arrives, `ended` once as its response closes, with the facts the access log has. A
 * singleton; everything per request lives on the request (see ObservedRequest).
 */
@Injectable()
export class RequestObserver {
  constructor(
    private readonly metrics: MetricsService,
    private readonly tracing: TracingService,
    private readonly catalog: CatalogService,
  ) {}

  started(req: GatewayRequest): void {
    observeRequest(req, this.tracing.startRequest(req.method, req.headers));
  }

  ended(req: GatewayRequest, res: GatewayResponse, end: RequestEnd): void {
    const ctx = req.ctx;
    const observed = observedRequest(req);
    const endpoint = routeOf(req);
    const errorCode = ctx.errorCode ?? undefined;
    const outcome =
      end.outcome === 'client_closed'
        ? 'client_closed'
        : res.statusCode >= 400 || errorCode !== undefined
          ? 'error'
          : 'success';
    const model = ctx.model === undefined ? undefined : this.catalog.find(ctx.model);
    const since = (t: bigint | undefined, from: bigint): number | undefined =>
      t === undefined ? undefined : Number(t - from) / 1e9;
    const facts: RequestFacts = {
      endpoint,
      status: res.statusCode,
      outcome,
      model: ctx.model,
      provider: ctx.provider,
      stream: ctx.stream,
      keyId: ctx.keyId,
      durationSeconds: end.latencyMs / 1000,
      overheadSeconds: since(observed?.upstreamSentAt, ctx.startedAt),
      upstreamFirstByteSeconds:
        observed?.upstreamSentAt === undefined
          ? undefined
          : since(observed.upstreamFirstByteAt, observed.upstreamSentAt),
      firstTokenSeconds: since(observed?.firstEventAt, ctx.startedAt),
      usage: ctx.usage,
      costUsd: ctx.usage && model ? costUsd(ctx.usage, model) : undefined,
      errorCode,
      protections: ctx.protections,
      protectionUsage: ctx.protectionUsage,
    };
    this.metrics.requestEnded(facts);
    const trace = traceOf(req);
    if (trace !== undefined) {
      trace.span.updateName(`${req.method} ${endpoint}`);
      trace.end(
        spanAttributes(req, res, facts, model?.upstreamId),
        outcome === 'success' ? undefined : (errorCode ?? outcome),
      );
    }
  }
}

/** The route template Express matched, so that ids in paths do not become label values. */
export function routeOf(req: GatewayRequest): string {
  const route = (req as { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : 'unmatched';
}

/** HTTP, GenAI and gateway attributes; counts and ids only, never content. */
function spanAttributes(
  req: GatewayRequest,
  res: GatewayResponse,
  f: RequestFacts,
  upstreamModel: string | undefined,
): Attributes {
  const a: Attributes = {
    'http.route': f.endpoint,
    'http.response.status_code': res.statusCode,
    'gateway.request_id': req.ctx.requestId,
    'gateway.outcome': f.outcome,
  };
  if (req.ctx.keyId !== undefined) {
    a['gateway.key_id'] = req.ctx.keyId;
  }
  if (f.stream !== undefined) {
    a['gateway.stream'] = f.stream;
  }
  if (f.protections !== undefined) {
    a['gateway.protections'] = f.protections;
  }
  if (f.model !== undefined) {
    a['gen_ai.operation.name'] = 'chat';
    a['gen_ai.request.model'] = f.model;
  }
  if (upstreamModel !== undefined) {
    a['gen_ai.response.model'] = upstreamModel;
  }
  if (f.provider !== undefined) {
    a['gen_ai.provider.name'] = f.provider;
  }
  const u = f.usage;
  if (u !== undefined) {
    a['gen_ai.usage.input_tokens'] = u.inputTokens;
    a['gen_ai.usage.output_tokens'] = u.outputTokens;
    if (u.cachedInputTokens !== undefined) {
      a['gen_ai.usage.cache_read.input_tokens'] = u.cachedInputTokens;
    }
    if (u.cacheWriteInputTokens !== undefined) {
      a['gen_ai.usage.cache_creation.input_tokens'] = u.cacheWriteInputTokens;
    }
    if (u.reasoningTokens !== undefined) {
      a['gen_ai.usage.reasoning_tokens'] = u.reasoningTokens;
    }
  }
  if (f.costUsd !== undefined) {
    a['gateway.cost_usd'] = f.costUsd;
  }
  return a;
}
