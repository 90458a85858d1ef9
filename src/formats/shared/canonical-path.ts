import { Logger } from '@nestjs/common';
import { Observable, type Subscriber, defer, tap } from 'rxjs';
import type { CatalogService } from '../../catalog/catalog.service';
import type { CatalogModel } from '../../catalog/catalog.types';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { endWith, streamIncompleteError } from '../../common/sse/stream-end';
import type { CanonicalEvent, CanonicalRequest, WireFormat } from '../../core/canonical';
import {
  type CallContext,
  type GeneratingProvider,
  type RelayingProvider,
  type UpstreamProvider,
  canGenerate,
  canRelay,
} from '../../upstream/provider.interface';
import type { ProviderRegistry } from '../../upstream/provider-registry';
import { nativeFormatsOf } from '../../catalog/provider-kind';
import { printable } from '../../common/validation/top-level.validation';

export const DROPPED_PARAMS_HEADER = 'x-gateway-dropped-params';

const logger = new Logger('Translation');
const FIELD_NAME = /^[A-Za-z0-9_.]{1,64}$/;

/**
 * How a request is served: `native`, the same-format fast path; `canonical`, decoded and
 * served by `provider.generate` for `model` (whose `upstreamApi` says which upstream API
 * the provider translates to).
 */
export type ServingPath =
  | { kind: 'native'; provider: RelayingProvider }
  | { kind: 'canonical'; model: CatalogModel; provider: GeneratingProvider };

/** Resolves the model for the endpoint and records it in the request's log context. */
export function resolveModel(
  catalog: CatalogService,
  providers: ProviderRegistry,
  format: WireFormat,
  id: string,
  req: GatewayRequest,
): { model: CatalogModel; provider: UpstreamProvider } {
  const model = catalog.resolve(id, format);
  req.ctx.model = model.id;
  req.ctx.provider = model.provider.name;
  return { model, provider: providers.get(model.provider) };
}

/** How one generation request is served, decided once before any upstream call. */
export interface GenerationRoute {
  model: CatalogModel;
  provider: UpstreamProvider;
  path: ServingPath;
  /** Outgoing protections are on: the canonical path, whatever the model speaks. */
  isProtected: boolean;
}

/**
 * Records the resolved model, its provider and whether the request streams in the log
 * context, and picks the serving path (the canonical one when the request has outgoing
 * protections).
 */
export function routeGeneration(
  model: CatalogModel,
  providers: ProviderRegistry,
  isProtected: boolean,
  format: WireFormat,
  body: { stream?: boolean | null },
  req: GatewayRequest,
): GenerationRoute {
  req.ctx.model = model.id;
  req.ctx.provider = model.provider.name;
  req.ctx.stream = body.stream === true;
  const provider = providers.get(model.provider);
  return {
    model,
    provider,
    path: servingPath(format, model, provider, isProtected),
    isProtected,
  };
}

/**
 * Whether `provider` serves `format` natively for `model` (its descriptor says so and it
 * can pass a body through): then the client's body is relayed as it is.
 */
export function servesNatively(
  format: WireFormat,
  model: CatalogModel,
  provider: UpstreamProvider,
): boolean {
  return canRelay(provider) && nativeFormatsOf(provider.descriptor, model).includes(format);
}

/**
 * Whether a client of `format` talks to a model of another wire format, whose limits it
 * cannot be expected to know (Claude Code sending a GPT model the output cap of a Claude
 * model). A model without a native format (served in-process, Gemini) speaks the one of
 * its family: Messages for the anthropic family, the OpenAI formats for the others.
 */
export function isCrossFormat(
  format: WireFormat,
  model: CatalogModel,
  provider: UpstreamProvider,
): boolean {
  const native = nativeFormatsOf(provider.descriptor, model);
  if (native.length > 0) {
    return !native.includes(format);
  }
  return (format === 'messages') !== (model.family === 'anthropic');
}

/**
 * Picks the fast path when the model's upstream speaks the inbound format, else translation
 * to the API the provider's descriptor picks for the format (the model's by default).
 * `forceCanonical` (outgoing protections, which read the answer as canonical events) takes
 * the canonical path even then, still to the upstream API of the inbound format.
 */
export function servingPath(
  format: WireFormat,
  model: CatalogModel,
  provider: UpstreamProvider,
  forceCanonical = false,
): ServingPath {
  const native = servesNatively(format, model, provider);
  if (native && !forceCanonical && canRelay(provider)) {
    return { kind: 'native', provider };
  }
  if (!canGenerate(provider)) {
    throw new InvalidRequestError(
      `The model '${model.id}' is served through the ${model.upstreamApi} API, which this endpoint cannot translate to.`,
      'model',
      'unsupported_route',
    );
  }
  const upstreamApi = native
    ? format
    : (provider.descriptor.translatedApi?.(format, model) ?? model.upstreamApi);
  return {
    kind: 'canonical',
    model: upstreamApi === model.upstreamApi ? model : { ...model, upstreamApi },
    provider,
  };
}

/**
 * Hosted (server-side) tools run inside one vendor's API; another upstream cannot run them.
 * Merely offered to a translated model (Codex offers `web_search` on every turn), they are
 * dropped and returned as `tools.<type>` for `x-gateway-dropped-params`: the model answers
 * without them, as it would when it chose not to use them. `forced`: the tool choice names
 * one of them, which cannot be honoured: 400 naming it. `protectedBy`: the request is on
 * the canonical path for its outgoing protections (their names), on a model whose own API
 * could have run the tool: 400 naming the tool, so the client can choose.
 */
export function dropHostedTools(
  tools: unknown,
  isFunctionTool: (tool: Record<string, unknown>) => boolean,
  model: CatalogModel,
  options: {
    protectedBy?: string;
    forced?: (tool: Record<string, unknown>) => boolean;
    at?: string;
  } = {},
): string[] {
  if (!Array.isArray(tools) || model.upstreamApi === 'local') {
    return [];
  }
  const { protectedBy, forced, at = 'tools' } = options;
  const dropped: string[] = [];
  tools.forEach((tool: Record<string, unknown>, i) => {
    if (isFunctionTool(tool)) {
      return;
    }
    if (protectedBy !== undefined || forced?.(tool)) {
      const why = protectedBy
        ? `cannot be combined with ${protectedBy}, which must read every output item`
        : `is forced by 'tool_choice' but runs only on its own vendor's API; the model '${model.id}' is served by another upstream`;
      throw new InvalidRequestError(
        `Tool type '${printable(tool.type)}' ${why}.`,
        `${at}[${i}]`,
        'unsupported_parameter',
      );
    }
    // The type is the client's text: only a plain one goes into a header.
    const type = typeof tool.type === 'string' && FIELD_NAME.test(tool.type) ? tool.type : '?';
    dropped.push(`${at}.${type}`);
  });
  return dropped;
}

/**
 * Starts the canonical path: translates (400 on a parameter that cannot be honoured),
 * sets `x-gateway-dropped-params`, and for a stream waits for the first event so that an
 * upstream error before it still gets its own status and envelope, not an in-band error.
 * A source that completes without `message_stop` fails (see {@link requireMessageStop}).
 */
export async function startCanonical(
  provider: GeneratingProvider,
  request: CanonicalRequest,
  model: CatalogModel,
  ctx: CallContext,
  res: GatewayResponse,
): Promise<Observable<CanonicalEvent>> {
  const events = requireMessageStop(provider.generate(request, model, ctx));
  const dropped = ctx.droppedParams ?? [];
  if (dropped.length > 0) {
    const names = [...new Set(dropped)];
    res.setHeader(DROPPED_PARAMS_HEADER, names.join(', '));
    // Field names only, and only plain ones: the values (and odd names) are the client's.
    const shown = names.map((n) => (FIELD_NAME.test(n) ? n : '?')).join(', ');
    logger.debug(
      `request ${ctx.requestId}: ${model.id} (${model.upstreamApi}) dropped or changed ${shown}`,
    );
  } else if (!res.headersSent) {
    res.removeHeader(DROPPED_PARAMS_HEADER); // set by an earlier attempt that failed
  }
  return request.stream && model.upstreamApi !== 'local' ? await whenStarted(events) : events;
}

/**
 * Fails a canonical event source that completes without `message_stop`, so that no
 * encoder ever ends a cut-off answer as if it were complete: every format reports it with
 * its own error frames (or, unstreamed, its error envelope), from this one place.
 */
export function requireMessageStop(events: Observable<CanonicalEvent>): Observable<CanonicalEvent> {
  return defer(() => {
    let stopped = false;
    return endWith(
      events.pipe(
        tap((event) => {
          if (event.type === 'message_stop') {
            stopped = true;
          }
        }),
      ),
      () => {
        if (!stopped) {
          throw streamIncompleteError('message', 'model');
        }
        return [];
      },
    );
  });
}

/**
 * Subscribes now and resolves once the first value arrives (or the source completes),
 * with an Observable that replays it and continues; rejects when the source fails first.
 * Unsubscribing from the result unsubscribes from the source.
 */
export function whenStarted<T>(source: Observable<T>): Promise<Observable<T>> {
  return new Promise((resolve, reject) => {
    const buffer: T[] = [];
    let downstream: Subscriber<T> | undefined;
    let ended: { error: unknown } | 'complete' | undefined;
    let settled = false;
    const out = new Observable<T>((subscriber) => {
      downstream = subscriber;
      for (const value of buffer.splice(0)) {
        subscriber.next(value);
      }
      if (ended === 'complete') {
        subscriber.complete();
      } else if (ended) {
        subscriber.error(ended.error);
      }
      return () => subscription.unsubscribe();
    });
    const subscription = source.subscribe({
      next(value) {
        if (downstream) {
          downstream.next(value);
          return;
        }
        buffer.push(value);
        if (!settled) {
          settled = true;
          resolve(out);
        }
      },
      error(error: unknown) {
        if (!settled) {
          settled = true;
          reject(error instanceof Error ? error : new Error(String(error)));
        } else if (downstream) {
          downstream.error(error);
        } else {
          ended = { error };
        }
      },
      complete() {
        if (downstream) {
          downstream.complete();
        } else {
          ended = 'complete';
        }
        if (!settled) {
          settled = true;
          resolve(out);
        }
      },
    });
  });
}
