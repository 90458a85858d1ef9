import { Injectable, type Logger } from '@nestjs/common';
import { fromEvent, takeUntil } from 'rxjs';
import type { CatalogModel, ModelPricing } from '../../../catalog/catalog.types';
import { CatalogService } from '../../../catalog/catalog.service';
import { GatewayError } from '../../../common/errors/gateway-errors';
import { FlowControl } from '../../../common/sse/flow-control';
import { collectResponse } from '../../../core/accumulate';
import type { CanonicalRequest, CanonicalUsage } from '../../../core/canonical';
import {
  type CallContext,
  type GeneratingProvider,
  type UpstreamProvider,
  canGenerate,
} from '../../../upstream/provider.interface';
import { ProviderRegistry } from '../../../upstream/provider-registry';
import { reservedPromptTokens, worstCaseOfModel } from '../../../limits/worst-case';
import { estimatePromptTokens, familyProfile } from '../../../limits/tokens/token-estimator';
import { invalidSetting } from '../protection-settings';

/** A judging call: one system text, one user text, a short answer. */
export interface JudgeCall {
  modelId: string;
  system: string;
  user: string;
  timeoutMs: number;
  /**
   * Budget of the answer. An OpenAI reasoning model spends its reasoning from the same
   * budget, so it gets at least {@link DEFAULT_REASONING_JUDGE_MAX_OUTPUT_TOKENS}: a short
   * budget would be used up before the verdict is written.
   */
  maxOutputTokens?: number;
  requestId: string;
  /** Aborts the call, e.g. when the client went away. */
  signal?: AbortSignal;
}

/** The judge's answer text, with what it cost (never added to the client's usage). */
export interface JudgeResult {
  text: string;
  /** Catalog id of the judge model. */
  model: string;
  usage: CanonicalUsage;
  costUsd: number;
  latencyMs: number;
}

export type JudgeErrorKind = 'timeout' | 'upstream' | 'aborted';

/** A judge call that produced no answer. The message is safe to log: it holds no content. */
export class JudgeError extends Error {
  constructor(
    readonly kind: JudgeErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'JudgeError';
  }
}

export const DEFAULT_JUDGE_MAX_OUTPUT_TOKENS = 300;
/** Reasoning spends the same token budget before the verdict is written. */
export const DEFAULT_REASONING_JUDGE_MAX_OUTPUT_TOKENS = 2000;

/** What a usage costs at the model's prices (USD per million tokens). */
export function costOf(usage: CanonicalUsage, pricing: ModelPricing): number {
  const cached = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  // Canonical input counts cached and cache-written tokens too (OpenAI semantics).
  const fresh = Math.max(usage.inputTokens - cached - cacheWrite, 0);
  const micro =
    fresh * pricing.input +
    cached * (pricing.cachedInput ?? pricing.input) +
    cacheWrite * (pricing.cacheWrite ?? pricing.input) +
    usage.outputTokens * pricing.output;
  return micro / 1_000_000;
}

/** Why an error ended a judge call, without its text (an upstream may echo the prompt). */
function describe(e: unknown): string {
  if (e instanceof GatewayError) {
    return e.code === null ? `HTTP ${e.status}` : `HTTP ${e.status} ${e.code}`;
  }
  return e instanceof Error ? e.name : 'unknown error';
}

/** Reasoning models that spend the output budget on reasoning take no sampling parameters. */
function spendsBudgetOnReasoning(model: CatalogModel, provider: UpstreamProvider): boolean {
  return model.capabilities.reasoning && provider.descriptor.reasoningSpendsOutputBudget === true;
}

/** The answer budget a judge call gets from `model` (see JudgeCall.maxOutputTokens). */
function judgeOutputTokens(requested: number | undefined, reasoning: boolean): number {
  return reasoning
    ? Math.max(requested ?? 0, DEFAULT_REASONING_JUDGE_MAX_OUTPUT_TOKENS)
    : (requested ?? DEFAULT_JUDGE_MAX_OUTPUT_TOKENS);
}

/** What one judge call of a protection can hold at most, for a budget's worst case. */
export interface JudgePromptBound {
  /**
   * The gateway's text every call holds (instructions, markers; never a client's): counted
   * with the model's tokenizer.
   */
  fixed: string;
  /** Characters of other text (the request's, the answer's) a call may hold, at most. */
  variableChars: number;
  /** As JudgeCall.maxOutputTokens. */
  maxOutputTokens?: number;
}

/**
 * Calls a catalog model as a judge through its provider's translation path
 * (`generate`), outside any client request's accounting. Used by the protections that
 * ask a second model for a verdict.
 */
@Injectable()
export class JudgeClient {
  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
  ) {}

  /**
   * The catalog model for a judge setting: a 400 (`invalid_protection_settings`, naming
   * `param`) when it is unknown, its provider is unavailable, or it cannot be generated
   * through its provider's translation path.
   */
  resolve(modelId: string, param: string): CatalogModel {
    return this.lookup(modelId, param).model;
  }

  /**
   * Boot check of an operator's default judge model (`setting` names its variable): an
   * unknown id stops the boot (every request using it would fail); one that cannot be
   * called now (a provider without its key) is a warning.
   */
  checkAtBoot(setting: string, modelId: string | undefined, logger: Logger): void {
    if (modelId === undefined) {
      return;
    }
    if (this.catalog.find(modelId) === undefined) {
      throw new Error(`${setting}: '${modelId}' is not a model of the catalog.`);
    }
    try {
      this.resolve(modelId, setting);
    } catch (error) {
      logger.warn(`${setting}: ${(error as Error).message}`);
    }
  }

  /**
   * The most `calls` judge calls of `modelId` may cost, in pico-dollars, for a budget to
   * reserve: each call's prompt at its bound (the fixed text as the limits count it, raised
   * by the tokenizer's tolerance; every other character at 3 tokens, no model reads more
   * than its context window) and its whole answer budget, at the dearest of the model and
   * the catalog fallbacks that may answer for it. 0 for a model that cannot be called.
   */
  worstCase(modelId: string, bound: JudgePromptBound, calls: number): bigint {
    const first = this.catalog.find(modelId);
    if (first === undefined || calls <= 0) {
      return 0n;
    }
    let worst = 0n;
    for (const id of [modelId, ...(first.fallbacks ?? [])]) {
      let target: { model: CatalogModel; provider: GeneratingProvider };
      try {
        target = this.lookup(id, 'model');
      } catch {
        continue;
      }
      const { model, provider } = target;
      const prompt = Math.min(
        model.contextWindow,
        fixedTokens(bound.fixed, model.family) +
          Math.ceil(bound.variableChars * 3 * familyProfile(model.family).factor),
      );
      const output = judgeOutputTokens(
        bound.maxOutputTokens,
        spendsBudgetOnReasoning(model, provider),
      );
      const cost = worstCaseOfModel(model, prompt, output);
      worst = cost > worst ? cost : worst;
    }
    return worst * BigInt(calls);
  }

  /**
   * Runs one judge call; rejects with JudgeError on timeout, abort or any failure. When the
   * judge model is down (an upstream failure, not a timeout: the time is spent), its catalog
   * `fallbacks` are asked in order within what is left of `timeoutMs`.
   */
  async call(call: JudgeCall): Promise<JudgeResult> {
    const deadline = Date.now() + call.timeoutMs;
    const fallbacks = this.catalog.find(call.modelId)?.fallbacks ?? [];
    let failure: JudgeError | undefined;
    for (const modelId of [call.modelId, ...fallbacks]) {
      const left = deadline - Date.now();
      if (failure !== undefined && left <= 0) {
        break;
      }
      try {
        return await this.callModel(
          failure === undefined ? call : { ...call, modelId, timeoutMs: left },
        );
      } catch (e) {
        if (!(e instanceof JudgeError) || e.kind !== 'upstream') {
          throw e;
        }
        failure = e;
      }
    }
    throw failure as JudgeError;
  }

  private async callModel(call: JudgeCall): Promise<JudgeResult> {
    const started = Date.now();
    if (call.signal?.aborted) {
      throw new JudgeError('aborted', 'the judge call was cancelled before it started');
    }
    let target: { model: CatalogModel; provider: GeneratingProvider };
    try {
      target = this.lookup(call.modelId, 'model');
    } catch (e) {
      throw new JudgeError('upstream', `judge model '${call.modelId}' cannot be called`, {
        cause: e,
      });
    }
    const { model, provider } = target;
    const controller = new AbortController();
    const ctx: CallContext = {
      requestId: call.requestId,
      signal: controller.signal,
      abort: () => controller.abort(),
      flow: new FlowControl(),
      clientHeaders: {},
      droppedParams: [],
    };
    const request = judgeRequest(call, model, provider);

    return new Promise<JudgeResult>((resolve, reject) => {
      let settled = false;
      const settle = (error: JudgeError | undefined, result?: JudgeResult): void => {
        if (settled) {
          return;
        }
        settled = true;
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
        if (error) {
          // Ends the subscription below (takeUntil) and the upstream request with it.
          controller.abort();
          reject(error);
        } else {
          // A settle without an error always carries the result.
          resolve(result as JudgeResult);
        }
      };
      const onAbort = (): void =>
        settle(new JudgeError('aborted', `judge call to '${model.id}' was cancelled`));
      const timer = setTimeout(
        () =>
          settle(
            new JudgeError(
              'timeout',
              `judge model '${model.id}' did not answer within ${call.timeoutMs} ms`,
            ),
          ),
        call.timeoutMs,
      );
      call.signal?.addEventListener('abort', onAbort, { once: true });

      let answer: Promise<Awaited<ReturnType<typeof collectResponse>>>;
      try {
        answer = collectResponse(
          provider
            .generate(request, model, ctx)
            .pipe(takeUntil(fromEvent(controller.signal, 'abort'))),
        );
      } catch (e) {
        // The translator refused the request (a 400 thrown before any call).
        settle(
          new JudgeError('upstream', `judge call to '${model.id}' failed: ${describe(e)}`, {
            cause: e,
          }),
        );
        return;
      }
      answer.then(
        (response) => {
          const text = response.content
            .map((block) => (block.type === 'text' ? block.text : ''))
            .join('');
          settle(undefined, {
            text,
            model: model.id,
            usage: response.usage,
            costUsd: costOf(response.usage, model.pricing),
            latencyMs: Date.now() - started,
          });
        },
        (e: unknown) =>
          settle(
            new JudgeError('upstream', `judge call to '${model.id}' failed: ${describe(e)}`, {
              cause: e,
            }),
          ),
      );
    });
  }

  private lookup(
    modelId: string,
    param: string,
  ): { model: CatalogModel; provider: GeneratingProvider } {
    const model = this.catalog.find(modelId);
    if (!model) {
      throw invalidSetting(param, `unknown model '${modelId}'; expected a catalog model id.`);
    }
    if (!model.provider.available) {
      throw invalidSetting(
        param,
        `the provider of model '${modelId}' is not configured, so it cannot judge.`,
      );
    }
    let provider: UpstreamProvider | undefined;
    try {
      provider = this.providers.get(model.provider);
    } catch {
      provider = undefined;
    }
    if (provider === undefined || !canGenerate(provider)) {
      throw invalidSetting(param, `model '${modelId}' cannot be called as a judge.`);
    }
    return { model, provider };
  }
}

/** The canonical request of a judge call: deterministic, no tools, short. */
function judgeRequest(
  call: JudgeCall,
  model: CatalogModel,
  provider: UpstreamProvider,
): CanonicalRequest {
  const reasoning = spendsBudgetOnReasoning(model, provider);
  const request: CanonicalRequest = {
    model: model.id,
    system: [{ type: 'text', text: call.system }],
    messages: [{ role: 'user', parts: [{ type: 'text', text: call.user }] }],
    tools: [],
    maxOutputTokens: judgeOutputTokens(call.maxOutputTokens, reasoning),
    stop: [],
    stream: false,
    source: undefined,
    extra: {},
  };
  if (reasoning) {
    request.reasoning = { effort: 'low' };
  } else {
    request.temperature = 0;
  }
  return request;
}

/**
 * Tokens of a judge's fixed text for a family, as a budget reserves them, counted once: the
 * texts are the protections' own instructions (a handful), never a client's.
 */
const fixedCounts = new Map<string, number>();

function fixedTokens(text: string, family: string): number {
  const key = `${family}\u0000${text}`;
  let tokens = fixedCounts.get(key);
  if (tokens === undefined) {
    // System and user message, as the judge sends them.
    const shape = { texts: [text], messageCount: 2, toolCount: 0, attachmentCount: 0 };
    tokens = reservedPromptTokens(estimatePromptTokens(shape, family), family);
    fixedCounts.set(key, tokens);
  }
  return tokens;
}
