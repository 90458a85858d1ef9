import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { ApiKeyService } from '../auth/api-key.service';
import { type ApiKeyInfo, keyMayUseModel } from '../common/key-policy';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogModel } from '../catalog/catalog.types';
import {
  RateLimitExceededError,
  RateLimiterUnavailableError,
} from '../common/errors/gateway-errors';
import { envelopeForPath } from '../common/errors/global-exception.filter';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { AllConfig, LimitsConfig } from '../config';
import { BUDGET_GATE, type BudgetGate, DetachedWithBudgetError } from '../usage/budget.gate';
import type { LimitFacts } from './limit-facts';
import { PromptTokens, usageEstimate } from './prompt-tokens';
import { LimitsHealth } from './limits-health';
import {
  checkContextWindow,
  checkCounts,
  checkMaxOutput,
  fitsContextWindow,
} from './request-limits';
import { goDuration, rateLimitHeaders, retryAfterSeconds } from './rate/headers';
import {
  type AcquireResult,
  type BucketSpec,
  type LeaseSpec,
  RATE_LIMIT_STORE,
  type RateLimitStore,
} from './rate/rate-limit.store';
import {
  type RatePlan,
  effectiveLimits,
  planRequest,
  refusalMessage,
  snapshotOf,
} from './rate/rate-plan';
import {
  estimatePromptTokens,
  windowEstimates,
  preloadFamilies,
  promptTokensUpperBound,
} from './tokens/token-estimator';
import { reachableModels, reservedPromptTokens, worstCaseCost } from './worst-case';

/**
 * What admission hands to the request's plan. `contextFallback`: the prompt does not fit the
 * requested model's context window, and this fallback (the one the plan's chooser picked
 * among those whose window holds it) serves instead; the plan starts its fallback list there.
 */
export interface Admission {
  readonly contextFallback?: CatalogModel;
}

/** The admission of almost every request: nothing to hand on (shared, never a new object). */
export const ADMITTED: Admission = Object.freeze({});

/** What the request's plan tells admission about its fallbacks; the limits choose none. */
export interface FallbackOptions {
  /** The model ids the client asked to fall back to, which the budget's worst case covers. */
  asked?: readonly unknown[];
  /**
   * Picks the fallback that serves a prompt too long for the requested model, given which
   * models' windows hold it (by the same estimate and tolerance as the check); undefined:
   * none, and the request gets context_length_exceeded.
   */
  contextFallback?: (fits: (m: CatalogModel) => boolean) => CatalogModel | undefined;
  /**
   * The worst case of the request's protection judge calls, in pico-dollars, given the
   * characters of its prompt text; a budget adds it when judge calls count against it.
   */
  protections?: (promptChars: number) => bigint;
}

/**
 * Admission of one request, before any upstream call (the key's model scope was checked by
 * then, where the request's plan is made): request limits (400), its budget and its team's (429 insufficient_quota: the worst-case cost
 * is reserved, see the usage module's ReservingBudgetGate), then rate limits (429) for the
 * client key, atomically across every dimension that applies. When
 * the response closes, the token reservation is corrected with the real usage and the
 * stream slot is released. The in-memory store answers synchronously, so on that path
 * admission involves no promise at all.
 */
@Injectable()
export class LimitsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('RateLimits');
  private readonly config: LimitsConfig;

  constructor(
    config: ConfigService<AllConfig, true>,
    private readonly catalog: CatalogService,
    private readonly keys: ApiKeyService,
    @Inject(RATE_LIMIT_STORE) private readonly store: RateLimitStore,
    private readonly health: LimitsHealth,
    @Optional() @Inject(BUDGET_GATE) private readonly budgets?: BudgetGate | null,
  ) {
    this.config = config.get('limits', { infer: true });
    health.configure(store.kind, this.config.failMode);
  }

  async onModuleInit(): Promise<void> {
    await this.store.ready();
    for (const model of this.keys.modelsWithLimits()) {
      if (!this.catalog.find(model)) {
        this.logger.warn(
          `The keys file sets limits for model '${model}', which is not in the catalog`,
        );
      }
    }
    if (this.tokenLimitsConfigured()) {
      // Rank tables take a few hundred ms to load: pay that at boot, not on a request.
      preloadFamilies(new Set(this.catalog.listAvailable().map((m) => m.family)));
    }
    this.logger.log(
      `Rate limits: ${this.store.kind} storage, fail ${this.config.failMode}; defaults per key: ` +
        `${this.config.defaults.requestsPerMinute || 'unlimited'} requests/min, ` +
        `${this.config.defaults.tokensPerMinute || 'unlimited'} tokens/min, ` +
        `${this.config.defaults.maxConcurrentStreams || 'unlimited'} concurrent streams`,
    );
  }

  onApplicationShutdown(): Promise<void> {
    return this.store.close();
  }

  /**
   * Lets the request through (its {@link Admission}, or a promise of it with Redis) or throws
   * the GatewayError the endpoint's filter renders in its own envelope. `fallbacks`: what
   * the request's plan says of its fallbacks (the limits read no header and choose none).
   */
  admit(
    facts: LimitFacts,
    req: GatewayRequest,
    res: GatewayResponse,
    fallbacks: FallbackOptions = {},
  ): Admission | Promise<Admission> {
    checkCounts(facts, this.config);
    const model = facts.model === undefined ? undefined : this.catalog.find(facts.model);
    let requestedOutput: number | undefined;
    let admission = ADMITTED;
    const prompt = new PromptTokens(facts);
    const estimate = (m: CatalogModel): number => prompt.count(m.family);
    const keyId = req.ctx.keyId;
    // Authentication sets both; a caller that only names the key id gets it looked up.
    const info = keyId === undefined ? undefined : (req.ctx.key ?? this.keys.info(keyId));
    if (model) {
      requestedOutput = checkMaxOutput(facts, model);
      // Tokenize only when the cheap upper bound does not already prove the prompt fits.
      if (
        promptTokensUpperBound(facts, model.family) + (requestedOutput ?? 0) >
        model.contextWindow
      ) {
        const windowOf = windowEstimates(facts);
        const window = windowOf(model.family);
        prompt.counted(window.tokens);
        try {
          checkContextWindow(model, window.tokens, requestedOutput ?? 0, window.tolerance, facts);
        } catch (error) {
          // `windowOf` counts the prompt once per tokenizer, not once per candidate.
          const fits = (m: CatalogModel): boolean => {
            const w = windowOf(m.family);
            return fitsContextWindow(m, w.tokens, requestedOutput ?? 0, w.tolerance);
          };
          const fallback = fallbacks.contextFallback?.(fits);
          if (fallback === undefined) {
            throw error;
          }
          admission = { contextFallback: fallback };
        }
      }
    }
    if (keyId === undefined) {
      return admission;
    }
    if (model) {
      // Priced only if the client leaves before the upstream reports usage.
      req.ctx.estimateUsage = usageEstimate(
        prompt,
        model.family,
        requestedOutput ?? Math.min(this.config.defaultOutputTokens, model.maxOutputTokens),
      );
    }
    // Only a key with a budget (its own or its team's) pays for the worst case and the
    // reservation; a request that generates nothing costs nothing.
    const budgets =
      info !== undefined && facts.tokenFree !== true && this.budgets?.applies(info)
        ? this.budgets
        : undefined;
    if (budgets !== undefined && facts.detached === true) {
      throw new DetachedWithBudgetError();
    }
    const judges = fallbacks.protections;
    const gate =
      budgets !== undefined && info !== undefined
        ? budgets.reserve(
            info,
            this.worstCase(facts, model, info, fallbacks.asked ?? [], requestedOutput, estimate),
            req,
            res,
            judges === undefined ? undefined : () => judges(promptChars(facts)),
          )
        : undefined;
    const rateLimit = (): Admission | Promise<Admission> => {
      const limited = this.rateLimit(
        facts,
        model,
        keyId,
        info,
        req,
        res,
        estimate,
        requestedOutput,
      );
      return limited === true ? admission : limited.then(() => admission);
    };
    return gate instanceof Promise ? gate.then(rateLimit) : rateLimit();
  }

  /**
   * The request's worst-case cost over every model it may reach (see worst-case.ts); 0 for a
   * model the catalog does not know (it has no price, and the router refuses it).
   */
  private worstCase(
    facts: LimitFacts,
    model: CatalogModel | undefined,
    info: ApiKeyInfo,
    asked: readonly unknown[],
    requestedOutput: number | undefined,
    estimate: (m: CatalogModel) => number,
  ): bigint {
    if (model === undefined) {
      return 0n;
    }
    const models = reachableModels(
      model,
      (id) => this.catalog.find(id),
      (m) => m.provider.available && keyMayUseModel(info, m.id),
      asked,
    );
    const byFamily = new Map<string, number>();
    return worstCaseCost(models, requestedOutput, ({ family, contextWindow }) => {
      if (facts.uncountedInput === true) {
        // The provider reads more than the gateway can count: at most a full window.
        return contextWindow;
      }
      let tokens = byFamily.get(family);
      if (tokens === undefined) {
        // The requested model's count is the one the token rate limit charges too.
        const counted =
          family === model.family ? estimate(model) : estimatePromptTokens(facts, family);
        tokens = reservedPromptTokens(counted, family);
        byFamily.set(family, tokens);
      }
      return tokens;
    });
  }

  private rateLimit(
    facts: LimitFacts,
    model: CatalogModel | undefined,
    keyId: string,
    info: ApiKeyInfo | undefined,
    req: GatewayRequest,
    res: GatewayResponse,
    estimate: (m: CatalogModel) => number,
    requestedOutput: number | undefined,
  ): true | Promise<true> {
    const plan = planRequest({
      prefix: this.config.redisKeyPrefix,
      keyId,
      model: model?.id,
      limits: effectiveLimits(this.config.defaults, info?.limits),
      modelLimits: model ? info?.modelLimits.get(model.id) : undefined,
      stream: facts.stream,
      chargesTokens: facts.tokenFree !== true,
      tokenCost: () => {
        const output =
          requestedOutput ??
          Math.min(this.config.defaultOutputTokens, model?.maxOutputTokens ?? Infinity);
        return (model ? estimate(model) : 0) + output;
      },
      leaseId: randomUUID,
    });
    if (!plan) {
      return true;
    }
    let decision: AcquireResult | Promise<AcquireResult>;
    try {
      decision = this.store.acquire(plan.dims.map((d) => d.spec));
    } catch (err) {
      return this.storeFailed(err);
    }
    if (decision instanceof Promise) {
      return decision.then(
        (result) => this.settle(plan, result, req, res),
        (err: unknown) => this.storeFailed(err),
      );
    }
    return this.settle(plan, decision, req, res);
  }

  private settle(
    plan: RatePlan,
    result: AcquireResult,
    req: GatewayRequest,
    res: GatewayResponse,
  ): true {
    const family = envelopeForPath(req.path, undefined);
    const headers = rateLimitHeaders(family, snapshotOf(plan, result), Date.now());
    for (const [name, value] of Object.entries(headers)) {
      res.setHeader(name, value);
    }
    if (!result.allowed) {
      throw this.refusal(plan, result);
    }
    // Only the leases and token buckets outlive admission (until the response closes),
    // and only they are kept: not the plan, its dimensions or arrays sized by push().
    const leases = plan.dims.filter((d) => d.spec.kind === 'lease').map((d) => d.spec as LeaseSpec);
    const tokenSpecs = plan.dims
      .filter((d) => d.metric === 'tokens' && d.spec.kind === 'bucket')
      .map((d) => d.spec as BucketSpec);
    if (tokenSpecs.length > 0 || leases.length > 0) {
      this.settleOnClose(req, res, leases, tokenSpecs, plan.tokenCost);
    }
    return true;
  }

  /**
   * Gives back the leases and corrects the token buckets by the tokens used once the
   * response is over. Built here, not in settle(), so that the listener's scope holds these
   * arguments and not settle()'s plan.
   */
  private settleOnClose(
    req: GatewayRequest,
    res: GatewayResponse,
    leases: LeaseSpec[],
    tokenSpecs: BucketSpec[],
    reserved: number,
  ): void {
    const done = (): void => {
      for (const lease of leases) {
        this.store.release(lease);
      }
      if (tokenSpecs.length > 0) {
        const used = tokensUsed(req, res, reserved);
        if (used !== reserved) {
          this.store.adjust(tokenSpecs, used - reserved);
        }
      }
    };
    // A client can hang up while Redis decides: then 'close' has already fired.
    if (res.closed) {
      done();
    } else {
      res.on('close', done); // 'close' comes once: no once() wrapper per request
    }
  }

  private refusal(plan: RatePlan, result: AcquireResult): RateLimitExceededError {
    if (result.retryAfterMs < 0) {
      // Larger than the whole per-minute budget: waiting will not help.
      return new RateLimitExceededError(refusalMessage(plan, result, ''), {
        'x-should-retry': 'false',
      });
    }
    const seconds = retryAfterSeconds(result.retryAfterMs);
    return new RateLimitExceededError(refusalMessage(plan, result, goDuration(seconds * 1000)), {
      'retry-after': String(seconds),
    });
  }

  private storeFailed(err: unknown): true {
    this.health.checkFailed(err);
    if (this.config.failMode === 'closed') {
      throw new RateLimiterUnavailableError();
    }
    return true;
  }

  private tokenLimitsConfigured(): boolean {
    if (this.config.defaults.tokensPerMinute > 0) {
      return true;
    }
    return this.keys.anyLimit((l) => (l.tokensPerMinute ?? 0) > 0);
  }
}

/**
 * Tokens the request really used: the usage the format recorded when the answer ended;
 * none when it failed before answering; the reservation when that is unknown (a client
 * that hung up mid-stream is charged what was reserved).
 */
function tokensUsed(req: GatewayRequest, res: GatewayResponse, reserved: number): number {
  const usage = req.ctx.usage;
  if (usage) {
    return usage.inputTokens + usage.outputTokens;
  }
  return res.statusCode >= 400 ? 0 : reserved;
}

/** Characters of a request's prompt text (what its protections can scan and show a judge). */
function promptChars(facts: LimitFacts): number {
  let chars = 0;
  for (const text of facts.texts) {
    chars += text.length;
  }
  return chars;
}
