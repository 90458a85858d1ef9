import { randomUUID } from 'node:crypto';
import { endpointOfPath } from '../common/key-policy';
import type { CatalogService } from '../catalog/catalog.service';
import type { CanonicalUsage } from '../core/canonical';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import { observedRequest } from '../common/observed-request';
import { costPicoOf } from '../catalog/cost';
import type { LedgerRow, Outcome } from './ledger-row';

/** Where finished requests' rows go. */
export interface LedgerSink {
  enqueue(row: LedgerRow): void;
}

function outcomeOf(req: GatewayRequest, res: GatewayResponse): Outcome {
  const { ctx } = req;
  if (res.statusCode === 429) {
    return 'rate_limited';
  }
  if (ctx.protections !== undefined && /=blocked\b/.test(ctx.protections)) {
    return 'blocked';
  }
  if (!res.writableFinished) {
    return 'client_aborted';
  }
  return res.statusCode >= 400 || ctx.errorCode ? 'error' : 'completed';
}

const NO_COST = { costPico: 0n, protectionCostPico: 0n } as const;

/** Longest model name a ledger row keeps of what the client asked for. */
export const MAX_LEDGER_MODEL_CHARS = 256;

/** The model the client named: its text, cut to a bound (a client may send a megabyte). */
function modelAsked(req: GatewayRequest): string | null {
  const body = req.body as { model?: unknown } | undefined;
  const asked =
    req.ctx.modelAsked ?? (typeof body?.model === 'string' ? body.model : req.query.model);
  return typeof asked === 'string' ? asked.slice(0, MAX_LEDGER_MODEL_CHARS) : null;
}

/**
 * Turns each finished request on a generation endpoint into a ledger row when its
 * response closes: tokens from the usage the upstream reported, cost priced from the
 * catalog (or estimated, and marked, when the client left before usage arrived), and
 * the protections' verdicts and judge costs. Requests without a valid key write nothing,
 * so anonymous traffic cannot fill the ledger.
 */
export class UsageRecorder {
  constructor(
    private readonly catalog: CatalogService,
    private readonly sink: LedgerSink,
  ) {}

  /** Nothing to note as a request starts: everything is read once it ended. */
  started(): void {}

  /**
   * A request hook of the request-context middleware (one 'close' listener serves the
   * access log, metrics and the ledger): writes the row of a generation request with a key.
   */
  ended(req: GatewayRequest, res: GatewayResponse): void {
    const keyId = req.ctx.keyId;
    const endpoint = keyId === undefined ? undefined : endpointOfPath(req.path);
    let row: LedgerRow | undefined;
    if (keyId !== undefined && endpoint !== undefined) {
      // The SSE writer marks the first event written: time to first token on streams.
      row = this.rowOf(req, res, keyId, endpoint, observedRequest(req)?.firstEventAt);
      this.sink.enqueue(row);
    }
    // The budget reservation becomes exactly what the ledger row says the request cost.
    req.ctx.budgetHold?.settle(row ?? NO_COST);
  }

  private rowOf(
    req: GatewayRequest,
    res: GatewayResponse,
    keyId: string,
    endpoint: string,
    firstByteAt: bigint | undefined,
  ): LedgerRow {
    const { ctx } = req;
    const outcome = outcomeOf(req, res);
    let usage: CanonicalUsage | undefined = ctx.usage;
    let estimated = false;
    if (usage === undefined && outcome === 'client_aborted' && ctx.estimateUsage) {
      usage = ctx.estimateUsage();
      estimated = true;
    }
    const model = ctx.model === undefined ? undefined : this.catalog.find(ctx.model);
    const latencyNs = process.hrtime.bigint() - ctx.startedAt;
    return {
      rowId: randomUUID(),
      createdAt: new Date(Date.now() - Number(latencyNs / 1_000_000n)),
      requestId: ctx.requestId,
      keyId,
      // From the authenticated key record already on the request: no lookup here.
      team: ctx.team ?? null,
      endpoint,
      method: req.method,
      modelRequested: modelAsked(req),
      model: ctx.model ?? null,
      provider: ctx.provider ?? null,
      status: res.statusCode,
      outcome,
      stream: ctx.stream ?? false,
      inputTokens: usage?.inputTokens ?? 0,
      cachedInputTokens: usage?.cachedInputTokens ?? 0,
      cacheWriteTokens: usage?.cacheWriteInputTokens ?? 0,
      outputTokens: usage?.outputTokens ?? 0,
      reasoningTokens: usage?.reasoningTokens ?? 0,
      costPico: usage && model ? costPicoOf(usage, model) : 0n,
      costEstimated: estimated,
      protectionCostPico: this.protectionCost(req),
      latencyMs: Math.round(Number(latencyNs) / 1e6),
      ttftMs:
        ctx.stream && firstByteAt !== undefined
          ? Math.round(Number(firstByteAt - ctx.startedAt) / 1e6)
          : null,
      protections: ctx.protections ?? null,
      errorCode: ctx.errorCode ?? null,
      cached: ctx.cache === 'hit',
    };
  }

  /** Judge calls priced exactly from their token counts (the header's figure is rounded). */
  private protectionCost(req: GatewayRequest): bigint {
    let total = 0n;
    for (const u of req.ctx.protectionUsage ?? []) {
      const model = this.catalog.find(u.model);
      if (model) {
        total += costPicoOf({ inputTokens: u.inputTokens, outputTokens: u.outputTokens }, model);
      }
    }
    return total;
  }
}
