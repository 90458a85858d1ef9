import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { GatewayRequest, GatewayResponse } from '../common/request-context';
import type { LimitsExtractor } from './limit-facts';
import { LimitsService } from './limits.service';

/** Metadata key of a route's limits extractor (generation routes set it too). */
export const REQUEST_LIMITS = 'gateway:requestLimits';

/**
 * Runs request limits (400) and rate limits (429) for a route that generates nothing
 * (e.g. reading a stored response), reading the body and query with the format's pure
 * `extractor`. Generation routes do not use it: their admission (the generation guard)
 * runs the limits after the cheaper checks, so that a request those refuse costs no quota.
 */
export const RequestLimits = (extractor: LimitsExtractor): MethodDecorator =>
  applyDecorators(SetMetadata(REQUEST_LIMITS, extractor), UseGuards(RequestLimitsGuard));

/** The extractor a handler declared, if any (for tests and tooling). */
export function requestLimitsOf(handler: object): LimitsExtractor | undefined {
  return Reflect.getMetadata(REQUEST_LIMITS, handler) as LimitsExtractor | undefined;
}

@Injectable()
export class RequestLimitsGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: LimitsService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const extract = this.reflector.get<LimitsExtractor | undefined>(
      REQUEST_LIMITS,
      context.getHandler(),
    );
    if (!extract) {
      return true;
    }
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const facts = extract(req.body, req.query);
    const admitted = this.limits.admit(facts, req, http.getResponse<GatewayResponse>());
    return admitted instanceof Promise ? admitted.then(() => true) : true;
  }
}
