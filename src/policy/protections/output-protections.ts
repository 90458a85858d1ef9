import { Injectable } from '@nestjs/common';
import { type MonoTypeOperatorFunction, type Observable, tap } from 'rxjs';
import type { CatalogModel } from '../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { CanonicalEvent, CanonicalRequest } from '../../core/canonical';
import {
  PROTECTIONS_HEADER,
  PROTECTIONS_USAGE_HEADER,
  type ProtectionReport,
} from './protection-report';
import { protectionUsageHeader, writeProtectionUsage } from './protection-usage';
import { ProtectionRegistry } from './protection-registry';
import type { ProtectionPlan } from './protections.gate';

/** The outgoing protections of one answer, as the canonical path runs them. */
export interface ProtectedOutput {
  /** The operator over the answer's events (applied once the upstream answered). */
  protect: MonoTypeOperatorFunction<CanonicalEvent>;
  /** The answer failed before `protect` ran: settles the verdicts as `error` (the last attempt's only). */
  failed(): void;
}

/**
 * Runs the outgoing steps of a request's protections: operators over the canonical events
 * of the answer, between the upstream and the format's encoder. A request with any is
 * served on the canonical path, whatever its format and model, so that one implementation
 * per protection covers every format, streamed or not.
 */
@Injectable()
export class OutputProtections {
  private names: string | undefined;

  constructor(private readonly registry: ProtectionRegistry) {}

  /**
   * The protections with an outgoing step, for error messages (`a or b`), from the
   * registry: a new protection is named without editing a message.
   */
  outgoingNames(): string {
    return (this.names ??= this.registry
      .all()
      .filter((p) => p.output !== undefined)
      .map((p) => p.name)
      .join(' or '));
  }

  /**
   * The request failed before an answer could be protected (every attempt failed): settles
   * the verdicts still pending as `error`. Per request, not per attempt, so that a retried
   * attempt settles nothing.
   */
  /**
   * The answer comes from the response cache: it passed these protections when it was stored
   * (a blocked answer never is, a redacted one is stored redacted), so nothing stays pending.
   */
  replayed(plan: ProtectionPlan | undefined, req: GatewayRequest, res: GatewayResponse): void {
    if (plan !== undefined && plan.outgoing.length > 0) {
      plan.report.settlePending('pass');
      publishVerdicts(plan.report, req, res);
    }
  }

  failed(plan: ProtectionPlan | undefined, req: GatewayRequest, res: GatewayResponse): void {
    if (plan !== undefined && plan.outgoing.length > 0) {
      plan.report.settlePending('error');
      publishVerdicts(plan.report, req, res);
    }
  }

  /** Whether the request has outgoing protections (which need the canonical path). */
  active(plan: ProtectionPlan | undefined): boolean {
    return (plan?.outgoing.length ?? 0) > 0;
  }

  /**
   * Prepares the outgoing protections of a decoded request (call before it goes upstream:
   * a protection may adjust it); undefined when none is on.
   */
  prepare(
    plan: ProtectionPlan | undefined,
    req: GatewayRequest,
    res: GatewayResponse,
    request: CanonicalRequest,
    model: CatalogModel,
  ): ProtectedOutput | undefined {
    if (plan === undefined || plan.outgoing.length === 0) {
      return undefined;
    }
    const ctx = { req, res, report: plan.report, request, model };
    // `outgoing` holds the protections with an output step.
    const steps = plan.outgoing.flatMap(({ protection, settings }) =>
      protection.output ? [protection.output(settings, ctx)] : [],
    );
    const publish = (): void => publishVerdicts(plan.report, req, res);
    const failed = (): void => {
      // An answer that failed has no verdict to wait for.
      plan.report.settlePending('error');
      publish();
    };
    return {
      failed,
      protect: (events: Observable<CanonicalEvent>) => {
        if (request.stream && chunked(req) && !res.headersSent) {
          // A stream's headers leave before the verdicts: the final ones follow as trailers.
          // Declared only once the stream started: an error before it is a plain JSON body,
          // which cannot carry trailers. A head already committed by keep-alives (a slow
          // upstream) cannot declare them any more; the SSE comment still carries them.
          res.setHeader('trailer', `${PROTECTIONS_HEADER}, ${PROTECTIONS_USAGE_HEADER}`);
        }
        const protectedEvents = steps.reduce((source, step) => source.pipe(step), events);
        // An unstreamed answer that fails may yet be retried: the request settles its
        // verdicts once no attempt is left (see failed below); a stream that started is not.
        return protectedEvents.pipe(
          request.stream ? tap({ complete: publish, error: failed }) : tap({ complete: publish }),
        );
      },
    };
  }
}

/**
 * Whether the response can carry trailers: HTTP/1.1 streams are chunked; HTTP/1.0 has no
 * chunked encoding (a `Trailer` header there makes Node throw), HTTP/2 is not served here.
 */
function chunked(req: GatewayRequest): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor >= 1;
}

/** Final verdicts: headers of a plain response, trailers and an SSE comment of a stream. */
function publishVerdicts(
  report: ProtectionReport,
  req: GatewayRequest,
  res: GatewayResponse,
): void {
  const value = report.toString();
  req.ctx.protections = report.toString(false);
  if (!res.headersSent) {
    report.writeTo(res);
    writeProtectionUsage(req, res);
    return;
  }
  const trailers: Record<string, string> = { [PROTECTIONS_HEADER]: value };
  const usage = req.ctx.protectionUsage;
  if (usage !== undefined && usage.length > 0) {
    trailers[PROTECTIONS_USAGE_HEADER] = protectionUsageHeader(usage);
  }
  if (!res.writableEnded) {
    // Comments are part of the SSE grammar and ignored by every client: visible in curl.
    res.write(
      Object.entries(trailers)
        .map(([name, v]) => `: ${name}: ${v}\n`)
        .join('') + '\n',
    );
    if (res.hasHeader('trailer')) {
      res.addTrailers(trailers);
    }
  }
}
