import { Injectable, Logger } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import type {
  CatalogDeployment,
  CatalogModel,
  RetrySettings,
  TimeoutSettings,
} from '../catalog/catalog.types';
import {
  ClientClosedRequestError,
  DeploymentsAtCapacityError,
  UpstreamHttpError,
  UpstreamTimeoutError,
} from '../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { AllConfig } from '../config';
import type { CanonicalUsage } from '../core/canonical';
import type { UpstreamConfig } from '../config/upstream.config';
import { setCallTimeouts } from '../upstream/call-timeouts';
import type { CallContext, UpstreamProvider } from '../upstream/provider.interface';
import { ProviderRegistry } from '../upstream/provider-registry';
import { type BreakerState, type DeploymentHealth } from './deployment-health';
import { type Candidate, capacityWaitMs, pickDeployment } from './deployment-picker';
import { HealthBoard } from './health-board';
import { backoffMs, isRetryable } from './retry-policy';
import { RetryBudget } from './retry-budget';
import { CallAbort, type CallSignal, linkUpstreamSignal } from '../upstream/call-signal';

export const MODEL_HEADER = 'x-gateway-model';
export const DEPLOYMENT_HEADER = 'x-gateway-deployment';
export const ATTEMPTS_HEADER = 'x-gateway-attempts';

/** One upstream attempt: the model as this deployment serves it, its provider, its own context. */
export interface Attempt {
  /** The catalog model with the deployment's provider and upstream id. */
  model: CatalogModel;
  provider: UpstreamProvider;
  /** The request's context with this attempt's signal (aborted by its deadline too). */
  ctx: CallContext;
}

/** Retry and timeout settings in effect for a model: its own, its provider's, the environment's. */
export interface EffectiveSettings {
  retry: RetrySettings;
  timeouts: TimeoutSettings;
}

const sleep = (ms: number, signal: CallSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Runs one generation request's upstream calls: picks a deployment of each candidate model
 * (the requested one, then its fallbacks) by weight and load, retries retryable failures
 * with backoff within the retry budget and the request's deadline, moves on to the next
 * model when a model's deployments are exhausted, and keeps each deployment's breaker.
 * Only failures before the attempt resolved are retried: callers resolve an attempt when
 * nothing has been sent to the client yet (a JSON answer read whole, a stream's first event
 * or head), so a stream that started is never retried.
 */
@Injectable()
export class ResilienceService {
  private readonly logger = new Logger(ResilienceService.name);
  private readonly defaults: UpstreamConfig;
  private readonly budget: RetryBudget;

  constructor(
    config: ConfigService<AllConfig, true>,
    private readonly providers: ProviderRegistry,
    private readonly board: HealthBoard,
  ) {
    this.defaults = config.get('upstream', { infer: true });
    this.budget = new RetryBudget(this.defaults.retryBudgetPercent / 100);
  }

  /** Catalog models are immutable: their merged settings are computed once, not per request. */
  private readonly settings = new WeakMap<CatalogModel, EffectiveSettings>();
  private readonly targets = new WeakMap<CatalogModel, WeakMap<CatalogDeployment, CatalogModel>>();

  /**
   * `model` as `deployment` serves it (that deployment's provider and upstream id), built
   * once per pair rather than copied on every attempt: one object less per request, and
   * caches keyed by the served model (prices, settings) find it again.
   */
  private servedAs(model: CatalogModel, deployment: CatalogDeployment): CatalogModel {
    if (deployment.provider === model.provider && deployment.upstreamId === model.upstreamId) {
      return model;
    }
    let byDeployment = this.targets.get(model);
    if (byDeployment === undefined) {
      byDeployment = new WeakMap();
      this.targets.set(model, byDeployment);
    }
    let target = byDeployment.get(deployment);
    if (target === undefined) {
      target = { ...model, provider: deployment.provider, upstreamId: deployment.upstreamId };
      byDeployment.set(deployment, target);
    }
    return target;
  }

  /** The settings in effect for `model`, key by key: model, then provider, then environment. */
  settingsOf(model: CatalogModel): EffectiveSettings {
    let settings = this.settings.get(model);
    if (settings === undefined) {
      settings = this.mergeSettings(model);
      this.settings.set(model, settings);
    }
    return settings;
  }

  private mergeSettings(model: CatalogModel): EffectiveSettings {
    const d = this.defaults;
    const p = model.provider;
    return {
      retry: {
        attempts: d.retryAttempts,
        backoffMs: d.retryBackoffMs,
        maxBackoffMs: d.retryMaxBackoffMs,
        ...p.retry,
        ...model.retry,
      },
      timeouts: {
        connectMs: d.connectTimeoutMs,
        firstByteMs: d.headersTimeoutMs,
        idleMs: d.bodyTimeoutMs,
        totalMs: d.totalTimeoutMs,
        ...p.timeouts,
        ...model.timeouts,
      },
    };
  }

  /**
   * The head of a held stream goes out before any attempt served (keep-alives while the
   * upstreams are slow): only the requested model is known then. The deployment and attempts
   * that served follow as an SSE comment and in the log.
   */
  heldHead(res: GatewayResponse, requested: CatalogModel): void {
    res.setHeader(MODEL_HEADER, requested.id);
    res.removeHeader(DEPLOYMENT_HEADER);
    res.removeHeader(ATTEMPTS_HEADER);
  }

  /**
   * Serves the request through `attempt`, trying `models` in order; resolves with the first
   * attempt that resolves, rejects with the last error when none did (or at once with a
   * failure no retry can fix). Sets the `x-gateway-*` headers and the log context.
   */
  async run<T>(
    req: GatewayRequest,
    res: GatewayResponse,
    parent: CallContext,
    models: readonly CatalogModel[],
    attempt: (a: Attempt) => Promise<T>,
    sticky?: string,
  ): Promise<T> {
    if (parent.signal.aborted) {
      throw new ClientClosedRequestError();
    }
    this.budget.requestStarted();
    // One listener per request: the budget, and the serving attempt's in-flight count.
    const served: { release?: () => void } = {};
    // The parent signal aborts when the response closes, however it ended (a listener on
    // the signal rather than one more 'close' listener on the response).
    parent.signal.addEventListener(
      'abort',
      () => {
        this.budget.requestEnded();
        served.release?.();
      },
      { once: true },
    );
    let attempts = 0;
    let lastError: Error | undefined;
    let capacityWait: number | undefined;
    // One deadline for the whole request, set by the requested model: a fallback gets what
    // is left of it (and no more than its own total).
    let requestDeadline = Infinity;
    for (const model of models) {
      const settings = this.settingsOf(model);
      const now = Date.now();
      if (requestDeadline === Infinity) {
        requestDeadline = now + settings.timeouts.totalMs;
      }
      const deadline = Math.min(requestDeadline, now + settings.timeouts.totalMs);
      const candidates = this.board.candidatesOf(model);
      const tried = new Set<CatalogDeployment>();
      for (let i = 0; i < settings.retry.attempts; i++) {
        // Every attempt after the request's first (a fallback's too) is extra load: it holds
        // a token of the retry budget until it ends.
        const isRetry = attempts > 0;
        const wait = i > 0 ? backoffMs(i, settings.retry, lastError) : 0;
        if (isRetry && (Date.now() + wait >= deadline || !this.budget.tryRetry())) {
          break;
        }
        try {
          if (wait > 0) {
            await sleep(wait, parent.signal);
          }
          if (parent.signal.aborted) {
            throw new ClientClosedRequestError();
          }
          const picked = pickDeployment(candidates, tried, Date.now(), Math.random, sticky);
          if (picked === undefined) {
            const wait = tried.size === 0 ? capacityWaitMs(candidates, Date.now()) : undefined;
            if (wait !== undefined) {
              capacityWait = Math.min(capacityWait ?? wait, wait);
            }
            break;
          }
          tried.add(picked.deployment);
          attempts++;
          this.mark(req, res, model, picked.deployment, attempts);
          try {
            const value = await this.once(
              req,
              served,
              parent,
              model,
              picked,
              settings,
              deadline,
              attempt,
            );
            if (res.headersSent) {
              servedComment(req, res);
            }
            return value;
          } catch (e) {
            const error = e instanceof Error ? e : new Error(String(e));
            lastError = error;
            if (!isRetryable(error) || parent.signal.aborted) {
              throw error;
            }
            this.logger.warn(
              `attempt ${attempts} on ${model.id}@${picked.deployment.provider.name} failed: ${error.message}`,
            );
          }
        } finally {
          if (isRetry) {
            this.budget.retryEnded();
          }
        }
      }
    }
    if (lastError === undefined && capacityWait !== undefined) {
      throw new DeploymentsAtCapacityError(models[0].id, capacityWait);
    }
    throw lastError ?? new UpstreamTimeoutError('No deployment could take the request in time.');
  }

  /** One attempt on one deployment, with its own signal, deadlines and health accounting. */
  private async once<T>(
    req: GatewayRequest,
    served: { release?: () => void },
    parent: CallContext,
    model: CatalogModel,
    picked: Candidate,
    settings: EffectiveSettings,
    deadline: number,
    attempt: (a: Attempt) => Promise<T>,
  ): Promise<T> {
    const { deployment, health, limiter } = picked;
    const controller = new CallAbort();
    const onParentAbort = (): void => controller.abort(parent.signal.reason);
    parent.signal.addEventListener('abort', onParentAbort, { once: true });
    linkUpstreamSignal(controller, req);
    const remaining = Math.max(0, deadline - Date.now());
    setCallTimeouts(controller, {
      connectMs: settings.timeouts.connectMs,
      headersMs: Math.min(settings.timeouts.firstByteMs, remaining),
      bodyMs: settings.timeouts.idleMs,
    });
    // The total deadline also cuts a stream that started: its reason becomes the error.
    const timer = setTimeout(
      () =>
        controller.abort(
          new UpstreamTimeoutError(
            `The upstream did not finish within the request's deadline (${settings.timeouts.totalMs} ms for ${model.id}, fallbacks included).`,
          ),
        ),
      remaining,
    );
    timer.unref();
    health.started();
    limiter?.acquire();
    const ctx: CallContext = {
      ...parent,
      signal: controller.signal,
      abort: () => controller.abort(),
      // What this attempt's provider dropped: a fallback's header must not list another's.
      droppedParams: [],
    };
    const target = this.servedAs(model, deployment);
    let settled = false;
    const release = (usage?: CanonicalUsage, refund = false): void => {
      clearTimeout(timer);
      parent.signal.removeEventListener('abort', onParentAbort);
      if (!settled) {
        settled = true;
        health.released();
        limiter?.release(usage, refund);
      }
    };
    try {
      const value = await attempt({
        model: target,
        provider: this.providers.get(deployment.provider),
        ctx,
      });
      health.succeeded();
      // The tokens of the answer count against the deployment's limits once it ended.
      const done = limiter === undefined ? release : (): void => release(req.ctx.usage);
      if (parent.signal.aborted) {
        done(); // the response closed already: no 'close' is coming
      } else {
        served.release = done;
      }
      return value;
    } catch (e) {
      const error =
        controller.signal.aborted && !parent.signal.aborted ? reasonOr(controller, e) : e;
      // Only the deployment's own answers judge it: an upstream error status means it is
      // reachable; the gateway's own refusals and a client that left say nothing about it
      // (a bad request must not close an ejected deployment's breaker, nor spend its quota).
      const upstreamAnswered = error instanceof UpstreamHttpError;
      if (isRetryable(error)) {
        health.failed(Date.now());
        release();
      } else if (upstreamAnswered) {
        health.succeeded();
        release();
      } else {
        health.abandoned();
        release(undefined, !(error instanceof ClientClosedRequestError));
      }
      throw error;
    }
  }

  private mark(
    req: GatewayRequest,
    res: GatewayResponse,
    model: CatalogModel,
    deployment: CatalogDeployment,
    attempts: number,
  ): void {
    req.ctx.model = model.id;
    req.ctx.provider = deployment.provider.name;
    req.ctx.attempts = attempts;
    if (!res.headersSent) {
      res.setHeader(MODEL_HEADER, model.id);
      res.setHeader(DEPLOYMENT_HEADER, deployment.provider.name);
      res.setHeader(ATTEMPTS_HEADER, String(attempts));
    }
  }
}

/**
 * A stream whose head went out (keep-alives while the upstreams were slow) before an attempt
 * served: its headers only named the requested model, so the serving model, deployment and
 * attempts go out as an SSE comment, which every client ignores (they are in the log too).
 */
function servedComment(req: GatewayRequest, res: GatewayResponse): void {
  if (!res.writableEnded) {
    res.write(
      `: ${MODEL_HEADER}: ${req.ctx.model}\n: ${DEPLOYMENT_HEADER}: ${req.ctx.provider}\n: ${ATTEMPTS_HEADER}: ${req.ctx.attempts}\n\n`,
    );
  }
}

function reasonOr(controller: CallAbort, error: unknown): unknown {
  const reason: unknown = controller.reason;
  return reason instanceof UpstreamTimeoutError ? reason : error;
}

export type { BreakerState, DeploymentHealth };
