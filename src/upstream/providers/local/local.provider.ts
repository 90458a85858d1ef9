import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Observable, type Subscriber } from 'rxjs';
import type { CatalogModel, CatalogProvider } from '../../../catalog/catalog.types';
import { type ProviderDescriptor, ProviderDriverFor } from '../../../catalog/provider-kind';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import type { AllConfig } from '../../../config';
import type { CallContext, ProviderDriver, UpstreamProvider } from '../../provider.interface';
import { LocalPlan, localId, planLocalAnswer } from './local-model';

/** `kind: local`: models embedded in the gateway, no URL, no key, nothing native. */
export const LOCAL: ProviderDescriptor = {
  kind: 'local',
  apis: ['local'],
  defaultApi: 'local',
  needsKey: false,
  needsBaseUrl: false,
  nativeFormats: () => [],
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Models served in-process: no network, no key. Emits the plan of local-model.ts as a
 * canonical event stream, one token per tick, honouring backpressure and cancellation.
 */
export class LocalProvider implements UpstreamProvider {
  readonly descriptor = LOCAL;

  constructor(
    readonly config: CatalogProvider,
    private readonly tokenDelayMs: number,
  ) {}

  generate(
    req: CanonicalRequest,
    model: CatalogModel,
    ctx: CallContext,
  ): Observable<CanonicalEvent> {
    return new Observable<CanonicalEvent>((subscriber) => {
      let cancelled = false;
      this.play(planLocalAnswer(req), model, req.stream, ctx, subscriber, () => cancelled).then(
        () => subscriber.complete(),
        (err: unknown) => subscriber.error(err),
      );
      return () => {
        cancelled = true;
      };
    });
  }

  private async play(
    plan: LocalPlan,
    model: CatalogModel,
    paced: boolean,
    ctx: CallContext,
    out: Subscriber<CanonicalEvent>,
    isCancelled: () => boolean,
  ): Promise<void> {
    const delay = paced ? this.tokenDelayMs : 0;
    const tick = async (): Promise<boolean> => {
      if (delay > 0) {
        await sleep(delay);
      }
      await ctx.flow.ready();
      return !isCancelled();
    };
    out.next({
      type: 'message_start',
      id: localId(''),
      model: model.id,
      created: Math.floor(Date.now() / 1000),
      inputTokens: plan.inputTokens,
    });
    let index = 0;
    if (plan.reasoning.length > 0) {
      out.next({ type: 'block_start', index, block: { kind: 'reasoning' } });
      for (const piece of plan.reasoning) {
        if (!(await tick())) {
          return;
        }
        out.next({ type: 'reasoning_delta', index, text: piece });
      }
      if (plan.signature !== undefined) {
        out.next({ type: 'reasoning_signature', index, signature: plan.signature });
      }
      out.next({ type: 'block_stop', index });
      index++;
    }
    if (plan.text.length > 0) {
      out.next({ type: 'block_start', index, block: { kind: 'text' } });
      for (const piece of plan.text) {
        if (!(await tick())) {
          return;
        }
        out.next({ type: 'text_delta', index, text: piece });
      }
      out.next({ type: 'block_stop', index });
      index++;
    }
    for (const call of plan.toolCalls) {
      out.next({
        type: 'block_start',
        index,
        block: { kind: 'tool_call', id: call.id, name: call.name },
      });
      for (const piece of call.arguments) {
        if (!(await tick())) {
          return;
        }
        out.next({ type: 'tool_arguments_delta', index, json: piece });
      }
      out.next({ type: 'block_stop', index });
      index++;
    }
    out.next({
      type: 'message_stop',
      finishReason: plan.finishReason,
      usage: {
        inputTokens: plan.inputTokens,
        outputTokens: plan.outputTokens,
        cachedInputTokens: 0,
        reasoningTokens: plan.reasoning.length,
      },
      ...(plan.stopSequence === undefined ? {} : { stopSequence: plan.stopSequence }),
    });
  }
}

/** Driver for `kind: local` providers. */
@Injectable()
@ProviderDriverFor(LOCAL)
export class LocalDriver implements ProviderDriver {
  private readonly tokenDelayMs: number;

  constructor(config: ConfigService<AllConfig, true>) {
    this.tokenDelayMs = config.get('catalog', { infer: true }).localTokenDelayMs;
  }

  create(config: CatalogProvider): UpstreamProvider {
    return new LocalProvider(config, this.tokenDelayMs);
  }
}
