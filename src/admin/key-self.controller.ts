import { Controller, Get, Inject, Req } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { type BudgetPeriod, budgetWindow } from '../common/key-policy';
import type { GatewayRequest } from '../common/request-context';
import type { AllConfig } from '../config';
import { PICO_PER_MICRO, microsToUsd, picoToUsd } from '../common/money';
import { UsagePipeline } from '../usage/usage.module';
import { AuthenticationError } from '../common/errors/gateway-errors';

const RESET_NAMES: Record<BudgetPeriod, string | null> = {
  day: 'daily',
  month: 'monthly',
  total: null,
};

/**
 * `GET /v1/key`: what the calling key is allowed and has spent, shaped like
 * OpenRouter's `GET /api/v1/key` (`label`, `limit`, `usage`, `limit_remaining`,
 * `limit_reset`) plus the gateway's own fields, so a client can check itself.
 */
@Controller('v1/key')
export class KeySelfController {
  constructor(
    private readonly usage: UsagePipeline,
    @Inject(ConfigService) private readonly config: ConfigService<AllConfig, true>,
  ) {}

  @Get()
  async get(@Req() req: GatewayRequest): Promise<object> {
    // The global AuthGuard ran, so the key is known (as it was when this request came in).
    const info = req.ctx.key;
    if (info === undefined) {
      throw new AuthenticationError('Incorrect API key provided.');
    }
    const defaults = this.config.get('limits', { infer: true }).defaults;
    const limits = { ...defaults, ...info.limits };
    const budget = info.budget;
    const period = budget?.period ?? 'total';
    const now = Date.now();
    const { start, resetsAt } = budgetWindow(period, now);
    const { spentPico, reservedPico } = await this.spendOf(info.id, budget !== undefined, {
      period,
      start,
    });
    const remainingPico =
      budget === undefined
        ? undefined
        : budget.amountMicros * PICO_PER_MICRO - spentPico - reservedPico;
    return {
      data: {
        id: info.id,
        label: info.name ?? info.id,
        name: info.name ?? null,
        type: info.source ?? 'static',
        usage: picoToUsd(spentPico),
        limit: budget ? microsToUsd(budget.amountMicros) : null,
        limit_remaining:
          remainingPico === undefined ? null : picoToUsd(remainingPico > 0n ? remainingPico : 0n),
        limit_reset: budget ? RESET_NAMES[budget.period] : null,
        budget: budget
          ? {
              amount_usd: microsToUsd(budget.amountMicros),
              period: budget.period,
              spent_usd: picoToUsd(spentPico),
              reserved_usd: picoToUsd(reservedPico),
              remaining_usd: picoToUsd(
                remainingPico !== undefined && remainingPico > 0n ? remainingPico : 0n,
              ),
              resets_at:
                resetsAt === undefined
                  ? null
                  : new Date(resetsAt).toISOString().replace('.000Z', 'Z'),
            }
          : null,
        rate_limits: {
          requests_per_minute: limits.requestsPerMinute || null,
          tokens_per_minute: limits.tokensPerMinute || null,
          max_concurrent_streams: limits.maxConcurrentStreams || null,
        },
        models: info.scope?.models?.patterns ?? null,
        endpoints: info.scope?.endpoints ? [...info.scope.endpoints] : null,
        expires_at: info.expiresAt === undefined ? null : new Date(info.expiresAt).toISOString(),
      },
    };
  }

  /**
   * A budgeted key's spend as its budget counts it: the counter that reservations settle
   * into (exact as soon as a request settles, on every replica), with what requests in
   * progress hold. Before its first budgeted request, and for keys without a budget, the
   * ledger's totals.
   */
  private async spendOf(
    keyId: string,
    budgeted: boolean,
    window: { period: BudgetPeriod; start: number },
  ): Promise<{ spentPico: bigint; reservedPico: bigint }> {
    const counter =
      budgeted && this.usage.counters
        ? await this.usage.counters.read({ scope: 'key', id: keyId, ...window })
        : undefined;
    if (counter !== undefined) {
      return counter;
    }
    const spentPico = this.usage.spend ? await this.usage.spend.spent(keyId, window.period) : 0n;
    return { spentPico, reservedPico: 0n };
  }
}
