import type { CatalogModel } from '../../catalog/catalog.types';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { SseFrame } from '../../common/sse/sse-writer';
import { endWith } from '../../common/sse/stream-end';
import { Observable, mergeMap } from 'rxjs';
import {
  ResponsesStreamDecoder,
  fromResponseObject,
} from '../../upstream/providers/openai/from-openai-responses';
import { dropHostedTools } from '../shared/canonical-path';
import type { GenerationAdapter, NativeCall } from '../shared/generation.adapter';
import { type RequestPlan, upstreamPayload } from '../shared/request-plan';
import type { ResponsesObserver, ResponsesOwnership } from './responses.ownership';
import type { ResponseRecorder } from './store/response-recorder';
import type { ResponsesRequestDto } from './responses-request.dto';
import { validateResponsesRequest } from './responses-request.validation';
import { decodeResponsesRequest } from './responses.decoder';
import { ResponsesStreamEncoder, toResponseObject } from './responses.encoder';
import { responsesLimitFacts } from './responses.limits';
import { ResponsesRelay, TERMINAL } from './responses.passthrough';
import { responsesProtections } from './responses.protections';
import { responsesSystemPrompt } from './responses.system-prompt';
import {
  type ResponseObject,
  type ResponsesStreamEvent,
  fromResponsesUsage,
  newResponsesId,
  responseShell,
} from './responses.wire';

const toFrame = (event: ResponsesStreamEvent): SseFrame => ({
  event: event.type,
  data: JSON.stringify(event),
});

/**
 * Conversation state a translated model cannot resolve: what a provider stored itself (the
 * gateway already rebuilt what it stored), a Conversations API object, a background run.
 * Rejected rather than silently dropped.
 */
function checkStateless(
  body: ResponsesRequestDto,
  model: CatalogModel,
  protectedBy: string | undefined,
): void {
  const hint = protectedBy
    ? `With ${protectedBy} the gateway must see the whole conversation; send the earlier items in 'input' instead.`
    : `It is held by the store of the provider that made it, which the model '${model.id}' cannot read; send the earlier items in 'input' instead.`;
  for (const field of ['previous_response_id', 'conversation'] as const) {
    if (body[field] !== undefined && body[field] !== null) {
      throw new InvalidRequestError(`'${field}' is not supported here. ${hint}`, field);
    }
  }
  if (body.background === true) {
    throw new InvalidRequestError(
      `'background' is not supported for the model '${model.id}': the gateway answers its responses in the request. Leave 'background' unset.`,
      'background',
    );
  }
  if (Array.isArray(body.input)) {
    const at = body.input.findIndex((item) => item.type === 'item_reference');
    if (at >= 0) {
      throw new InvalidRequestError(
        `Item references are not supported here. ${hint}`,
        `input[${at}]`,
      );
    }
  }
}

/**
 * The fast path of one request: the client's bytes (or the body with the upstream model id)
 * and a relay of the answer; `observer` sees the ids relayed, and a terminal event waits
 * until what it recorded is durable, so a client that has the whole answer can use its ids
 * on any replica.
 */
function nativeCall(
  plan: RequestPlan<ResponsesRequestDto>,
  model: CatalogModel,
  observer: ResponsesObserver | undefined,
): NativeCall {
  const { body, req } = plan;
  const payload = upstreamPayload(plan, model.upstreamId);
  const relay = new ResponsesRelay(
    model.id,
    () => responseShell(body, model.id, newResponsesId('resp_'), Math.floor(Date.now() / 1000)),
    (usage) => (req.ctx.usage = usage),
    observer?.snapshot,
    observer?.item,
  );
  return {
    payload,
    frames: (upstream) => {
      const relayed = endWith(upstream.pipe(mergeMap((frame) => relay.relay(frame))), () =>
        relay.end(),
      );
      return observer ? holdTerminal(relayed, observer.settled) : relayed;
    },
    fail: (error) => relay.fail(error),
    ...(observer ? { answered: observer.answered } : {}),
  };
}

/** Delays the terminal lifecycle event (and whatever follows it) until `settled` settles. */
function holdTerminal(
  frames: Observable<SseFrame>,
  settled: () => Promise<void>,
): Observable<SseFrame> {
  return new Observable<SseFrame>((subscriber) => {
    let held: Promise<void> | undefined;
    // Once held, every later notification queues behind the terminal event, in order.
    const pass = (emit: () => void): void => {
      if (held === undefined) {
        emit();
        return;
      }
      held = held.then(() => {
        if (!subscriber.closed) {
          emit();
        }
      });
    };
    const subscription = frames.subscribe({
      next: (frame) => {
        if (held === undefined && frame.event !== undefined && TERMINAL.has(frame.event)) {
          held = settled();
        }
        pass(() => subscriber.next(frame));
      },
      error: (error: unknown) => pass(() => subscriber.error(error)),
      complete: () => pass(() => subscriber.complete()),
    });
    return () => subscription.unsubscribe();
  });
}

/**
 * POST /v1/responses with owner records of what the native path relays, and, with a
 * recorder, the answers of the canonical path stored by the gateway (`store` not false):
 * the answer, or a stream's terminal event, waits until the stored response is durable.
 */
export function ownedResponsesAdapter(
  ownership: ResponsesOwnership,
  recorder?: ResponseRecorder,
): GenerationAdapter<ResponsesRequestDto> {
  const owned: GenerationAdapter<ResponsesRequestDto> = {
    ...responsesAdapter,
    // `store: false` leaves nothing upstream to reach later: nothing to record.
    native: (plan, model) =>
      nativeCall(
        plan,
        model,
        plan.body.store === false ? undefined : ownership.observer(plan.req, model),
      ),
  };
  if (recorder === undefined) {
    return owned;
  }
  return {
    ...owned,
    toJson(response, body, modelId, req) {
      if (!recorder.stores(body, req)) {
        return responsesAdapter.toJson(response, body, modelId, req);
      }
      let kept: ResponseObject | undefined;
      const json = toResponseObject(response, {
        model: modelId,
        request: body,
        keep: (stored) => (kept = stored),
      });
      return kept ? recorder.write(kept, body, req).then(() => json) : json;
    },
    encoder(body, modelId, req) {
      if (!recorder.stores(body, req)) {
        return responsesAdapter.encoder(body, modelId, req);
      }
      let kept: ResponseObject | undefined;
      const encoder = new ResponsesStreamEncoder({
        model: modelId,
        request: body,
        keep: (stored) => (kept = stored),
      });
      return {
        encode: (event) => encoder.encode(event).map(toFrame),
        end: () => encoder.end().map(toFrame),
        fail: (error) => encoder.fail(error).map(toFrame),
        frames: (encoded) =>
          holdTerminal(encoded, () => (kept ? recorder.write(kept, body, req) : Promise.resolve())),
      };
    },
  };
}

/** POST /v1/responses as the generation pipeline serves it. */
export const responsesAdapter: GenerationAdapter<ResponsesRequestDto> = {
  format: 'responses',
  validate: validateResponsesRequest,
  systemPrompt: responsesSystemPrompt,
  limits: responsesLimitFacts,
  protections: responsesProtections,

  checkCanonical(body, model, protectedBy) {
    checkStateless(body, model, protectedBy);
    const choice = body.tool_choice as Record<string, unknown> | string | null | undefined;
    const forced = (t: Record<string, unknown>): boolean =>
      typeof choice === 'object' &&
      choice !== null &&
      choice.type === t.type &&
      (choice.name === undefined || choice.name === t.name);
    const isFunction = (t: Record<string, unknown>): boolean => t.type === 'function';
    const dropped = dropHostedTools(
      body.tools,
      (t) => isFunction(t) || t.type === 'namespace',
      model,
      { protectedBy, forced },
    );
    // A namespace's functions are offered flat (responses.namespaces.ts); its other tools cannot be.
    body.tools?.forEach((t, i) => {
      if (t.type === 'namespace') {
        dropped.push(
          ...dropHostedTools(t.tools, isFunction, model, { protectedBy, at: `tools[${i}].tools` }),
        );
      }
    });
    return dropped;
  },

  decode: decodeResponsesRequest,

  toJson: (response, body, modelId) =>
    toResponseObject(response, { model: modelId, request: body }),

  encoder(body, modelId) {
    const encoder = new ResponsesStreamEncoder({ model: modelId, request: body });
    return {
      encode: (event) => encoder.encode(event).map(toFrame),
      end: () => encoder.end().map(toFrame),
      fail: (error) => encoder.fail(error).map(toFrame),
    };
  },

  native: (plan, model) => nativeCall(plan, model, undefined),

  nativeUsage: fromResponsesUsage,
  // The upstream's bytes as they are when there is no other model id to rewrite.
  namesModel: (answer, modelId) => typeof answer.model !== 'string' || answer.model === modelId,

  cache: {
    json: fromResponseObject,
    stream: () => new ResponsesStreamDecoder(),
    // A stored response has an id the key that made it owns (GET, previous_response_id):
    // replaying it to another key would hand out an id that key cannot use. Background
    // responses are polled by id. Only `store: false` answers are shared.
    replayable: (body) =>
      body.store === false && (body as { background?: unknown }).background !== true,
  },
};
