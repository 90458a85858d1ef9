import type { CanActivate, ExecutionContext, Type } from '@nestjs/common';
import { traceOf } from './trace-of';

const WRAPPED = Symbol('gateway.traced');

type Wrappable = CanActivate & { [WRAPPED]?: true };

/**
 * Gives each guard's `canActivate` a child span of the request span, without touching the
 * guards (the auth, protections and limits modules are owned elsewhere): the method is
 * wrapped on the prototype, once per process, and only when some gateway in the process
 * has tracing on. A request without a trace pays one WeakMap lookup.
 */
export function traceGuards(guards: readonly (readonly [Type<CanActivate>, string])[]): void {
  for (const [guard, spanName] of guards) {
    const proto = guard.prototype as Wrappable;
    if (proto[WRAPPED]) {
      continue;
    }
    const original = Object.getOwnPropertyDescriptor(guard.prototype, 'canActivate')
      ?.value as CanActivate['canActivate'];
    // A prototype method, made once per process: long-lived is what it is.
    // eslint-disable-next-line local/no-closure-assigned-to-property
    proto.canActivate = function (this: CanActivate, context: ExecutionContext) {
      const trace =
        context.getType() === 'http'
          ? traceOf(context.switchToHttp().getRequest<object>())
          : undefined;
      return trace === undefined
        ? original.call(this, context)
        : trace.step(spanName, () => original.call(this, context));
    };
    proto[WRAPPED] = true;
  }
}
