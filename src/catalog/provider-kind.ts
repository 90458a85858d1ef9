import { DiscoveryService } from '@nestjs/core';
import type { WireFormat } from '../core/canonical';
import type { CatalogModel } from './catalog.types';

/**
 * The upstream API a model is served through: one of the wire formats, or an API of the
 * provider's own (`local`, `gemini`), named by the provider's descriptor.
 */
export type UpstreamApi = WireFormat | (string & Record<never, never>);

/**
 * How an upstream frames a streamed answer: server-sent events, JSON lines (Ollama), or
 * binary AWS event-stream messages (Amazon Bedrock's ConverseStream and
 * InvokeModelWithResponseStream).
 */
export type StreamFraming = 'sse' | 'json-lines' | 'aws-eventstream';

/** A provider-specific catalog key (`anthropic_version`, `api_version`). */
export interface ProviderSetting {
  key: string;
  required?: boolean;
  /** Used when the catalog entry does not set it. */
  default?: string;
}

/**
 * What a provider kind tells the catalog and the router about itself. Declared once in the
 * provider's folder (on its driver, with {@link ProviderDriverFor}); the catalog validates
 * entries against it and routing reads it, so no other file lists provider kinds.
 */
export interface ProviderDescriptor {
  /** The catalog's `kind`. */
  readonly kind: string;
  /** Upstream APIs it speaks; a model's `upstream_api` must be one of them. */
  readonly apis: readonly UpstreamApi[];
  /** The `upstream_api` of a model that names none. */
  readonly defaultApi: UpstreamApi;
  /** Without its key a provider is listed as unavailable (its models answer 503). */
  readonly needsKey: boolean;
  /** False for in-process providers, which call no URL. */
  readonly needsBaseUrl: boolean;
  /**
   * The base URL when the entry sets neither `base_url` nor a set `base_url_env`; a
   * function of the entry's settings when it depends on them (a cloud region).
   */
  readonly defaultBaseUrl?: string | ((settings: Readonly<Record<string, string>>) => string);
  /** Extra keys a provider entry of this kind may set, kept in `CatalogProvider.settings`. */
  readonly settings?: readonly ProviderSetting[];
  /**
   * How it frames streamed answers (the translation path picks the frame reader from it);
   * undefined for in-process providers, which stream no bytes.
   */
  readonly framing?: StreamFraming;
  /**
   * Inbound formats it serves natively for `model` (the fast path relays the client's
   * body); default: the model's upstream API when it is a wire format.
   */
  nativeFormats?(model: CatalogModel): readonly WireFormat[];
  /** The upstream API a request of `format` is translated to; default: the model's. */
  translatedApi?(format: WireFormat, model: CatalogModel): UpstreamApi;
  /**
   * Its reasoning models spend reasoning from the output budget and take no sampling
   * parameters (a judge call then gets a larger budget and no temperature).
   */
  readonly reasoningSpendsOutputBudget?: boolean;
}

/**
 * Class decorator for a provider driver, with its kind's descriptor. The catalog reads the
 * descriptors and the provider registry the drivers, both found at boot through it.
 */
export const ProviderDriverFor = DiscoveryService.createDecorator<ProviderDescriptor>();

/** Descriptors by kind. */
export type ProviderKinds = ReadonlyMap<string, ProviderDescriptor>;

/** Inbound formats `descriptor` serves natively for `model`. */
export function nativeFormatsOf(
  descriptor: ProviderDescriptor,
  model: CatalogModel,
): readonly WireFormat[] {
  if (descriptor.nativeFormats) {
    return descriptor.nativeFormats(model);
  }
  const api = model.upstreamApi;
  return api === 'chat_completions' || api === 'responses' || api === 'messages'
    ? [api as WireFormat]
    : [];
}

/** Every descriptor declared on a discovered driver, by kind. */
export function discoverProviderKinds(discovery: DiscoveryService): ProviderKinds {
  const kinds = new Map<string, ProviderDescriptor>();
  for (const wrapper of discovery.getProviders({ metadataKey: ProviderDriverFor.KEY })) {
    const descriptor = discovery.getMetadataByDecorator(ProviderDriverFor, wrapper);
    if (descriptor !== undefined) {
      kinds.set(descriptor.kind, descriptor);
    }
  }
  return kinds;
}
