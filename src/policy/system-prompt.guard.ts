import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MissingSystemPromptError } from '../common/errors/gateway-errors';
import type { SystemPromptCheck } from './system-prompt.rule';

const SYSTEM_PROMPT_CHECK = 'gateway:systemPromptCheck';

/** Declares which S1 check a format's route applies (see system-prompt.rule.ts). */
export const RequireSystemPrompt = (check: SystemPromptCheck): MethodDecorator =>
  SetMetadata(SYSTEM_PROMPT_CHECK, check);

/** Enforces rule S1 before anything else touches the request or an upstream. */
@Injectable()
export class SystemPromptGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const check = this.reflector.get<SystemPromptCheck | undefined>(
      SYSTEM_PROMPT_CHECK,
      context.getHandler(),
    );
    if (!check) {
      return true;
    }
    const violation = check(context.switchToHttp().getRequest<{ body: unknown }>().body);
    if (violation) {
      throw new MissingSystemPromptError(violation.message, violation.param);
    }
    return true;
  }
}
