import {
  type CanActivate,
  Inject,
  Injectable,
  Logger,
  type OnApplicationShutdown,
  type Type,
} from '@nestjs/common';
import type { ConfigType } from '@nestjs/config';
import type { Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { observabilityConfig } from '../../config/observability.config';
import type { RequestTrace } from './request-trace';
import { traceOf } from './trace-of';
import { traceGuards } from './guard-spans';

/** What a traced request needs of the OpenTelemetry API, loaded only when tracing is on. */
interface Otel {
  api: typeof import('@opentelemetry/api');
  requestTrace: typeof import('./request-trace');
}

/**
 * OpenTelemetry tracing, off unless an OTLP endpoint is configured with the standard
 * `OTEL_*` variables (which the exporter, sampler and batch processor read themselves).
 * The provider belongs to this app and is not registered globally: spans reach their
 * parent through the request (see ObservedRequest), not through async context, so
 * nothing (no async hooks, no context manager) runs when tracing is off.
 */
@Injectable()
export class TracingService implements OnApplicationShutdown {
  readonly enabled: boolean;
  private readonly provider?: BasicTracerProvider;
  private readonly tracer?: Tracer;
  private readonly otel?: Otel;

  constructor(@Inject(observabilityConfig.KEY) config: ConfigType<typeof observabilityConfig>) {
    this.enabled = config.tracingEnabled;
    if (!this.enabled) {
      return;
    }
    // Loaded only when tracing is on: the SDK and its exporter cost ~45 ms of every cold
    // start, the API and propagator ~80 modules of idle heap.
    /* eslint-disable @typescript-eslint/no-require-imports */
    this.otel = {
      api: require('@opentelemetry/api') as typeof import('@opentelemetry/api'),
      requestTrace: require('./request-trace') as typeof import('./request-trace'),
    };
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    const { detectResources, envDetector, resourceFromAttributes } =
      require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
    const { BasicTracerProvider, BatchSpanProcessor } =
      require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const resource = resourceFromAttributes({ 'service.name': config.serviceName }).merge(
      detectResources({ detectors: [envDetector] }),
    );
    this.provider = new BasicTracerProvider({
      resource,
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
    });
    this.tracer = this.provider.getTracer('reasoning-inference-gateway');
    new Logger('Tracing').log(`Tracing on: OTLP/HTTP export as '${config.serviceName}'`);
  }

  /** Starts the SERVER span of a request, child of the client's `traceparent` if any. */
  startRequest(method: string, headers: Record<string, unknown>): RequestTrace | undefined {
    if (this.tracer === undefined || this.otel === undefined) {
      return undefined;
    }
    const { api, requestTrace } = this.otel;
    const parent = requestTrace.clientContext(api.ROOT_CONTEXT, headers);
    const span = this.tracer.startSpan(
      `${method} gateway`,
      { kind: api.SpanKind.SERVER, attributes: { 'http.request.method': method } },
      parent,
    );
    return new requestTrace.RequestTrace(this.tracer, span, parent);
  }

  /**
   * Runs `run` in a child span of the request's span when the request is traced. Call
   * sites check {@link enabled} first, so that with tracing off they pay nothing.
   */
  step<T>(req: object, name: string, run: () => T): T {
    const trace = traceOf(req);
    return trace === undefined ? run() : trace.step(name, run);
  }

  /**
   * Gives each guard's `canActivate` a child span named as given, when tracing is on. The
   * modules that own the guards call it at init (auth, generation admission).
   */
  traceGuards(guards: readonly (readonly [Type<CanActivate>, string])[]): void {
    if (this.enabled) {
      traceGuards(guards);
    }
  }

  /** Sends what is still buffered (tests; shutdown does it too). */
  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}
