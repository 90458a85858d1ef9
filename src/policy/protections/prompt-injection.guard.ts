import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  Logger,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { AllConfig } from '../../config';
import {
  type InjectionSettings,
  defaultInjectionSettings,
  parseInjectionSettings,
} from './injection-settings';
import { scanParts } from './prompt-injection/detector';
import {
  type LabeledPart,
  PROMPT_INJECTION_TOOL,
  type ProtectionExtractor,
  stripProtectionTools,
} from './protection-facts';
import { ProtectionsHealth, type ProtectionVerdict } from './protections-health';

const PROMPT_INJECTION = 'gateway:promptInjection';
export const PROTECTIONS_HEADER = 'x-gateway-protections';
const TOP_SIGNALS = 3;

/**
 * Runs `prompt_injection_protection` on this route, reading the body with the format's pure
 * `extractor`. Place it between `@RequestLimits(...)` and `@RequireSystemPrompt(...)`: guards
 * run in the order S1, protections, limits, so the protection tool is stripped before the
 * limits count tools and tokens, and a blocked request costs the client no quota.
 */
export const PromptInjectionProtection = (extractor: ProtectionExtractor): MethodDecorator =>
  applyDecorators(SetMetadata(PROMPT_INJECTION, extractor), UseGuards(PromptInjectionGuard));

/** The extractor a handler declared, if any (for tests and tooling). */
export function promptInjectionProtectionOf(handler: object): ProtectionExtractor | undefined {
  return Reflect.getMetadata(PROMPT_INJECTION, handler) as ProtectionExtractor | undefined;
}

export class PromptInjectionDetectedError extends InvalidRequestError {
  constructor(message: string, param: string | null) {
    super(message, param, 'prompt_injection_detected');
  }
}

/** `messages[3]` → `messages`: the field the OpenAI envelope's `param` names. */
function paramOf(where: string): string {
  return where.replace(/\s*\(.*\)$/, '');
}

@Injectable()
export class PromptInjectionGuard implements CanActivate {
  private readonly logger = new Logger('Protections');
  private readonly forced: boolean;
  private readonly defaults: InjectionSettings;

  constructor(
    private readonly reflector: Reflector,
    private readonly health: ProtectionsHealth,
    config: ConfigService<AllConfig, true>,
  ) {
    const protections = config.get('protections', { infer: true });
    this.forced = protections.forced.includes(PROMPT_INJECTION_TOOL);
    this.defaults = defaultInjectionSettings(protections.promptInjectionThreshold);
  }

  canActivate(context: ExecutionContext): boolean {
    const extractor = this.reflector.get<ProtectionExtractor | undefined>(
      PROMPT_INJECTION,
      context.getHandler(),
    );
    if (!extractor) {
      return true;
    }
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const body: unknown = req.body;

    if (extractor.toolChoiceNames(body).includes(PROMPT_INJECTION_TOOL)) {
      throw new InvalidRequestError(
        `'tool_choice' names '${PROMPT_INJECTION_TOOL}', a gateway protection, not a tool the model can call.`,
        'tool_choice',
        'invalid_tool_choice',
      );
    }
    const found = extractor.tools(body, [PROMPT_INJECTION_TOOL]);
    if (found.length > 1) {
      throw new InvalidRequestError(
        `'${PROMPT_INJECTION_TOOL}' is defined more than once (tools[${found[0].index}] and tools[${found[1].index}]).`,
        `tools[${found[1].index}]`,
        'invalid_protection_settings',
      );
    }
    if (found.length === 0 && !this.forced) {
      return true;
    }
    const settings =
      found.length === 1
        ? parseInjectionSettings(found[0].schema, found[0].schemaParam, this.defaults)
        : this.defaults;
    if (stripProtectionTools(body, found)) {
      // The fast paths forward the client's bytes when nothing changed: they changed.
      req.rawBody = undefined;
    }
    this.scan(extractor.parts(body), settings, req, http.getResponse<GatewayResponse>());
    return true;
  }

  private scan(
    all: LabeledPart[],
    settings: InjectionSettings,
    req: GatewayRequest,
    res: GatewayResponse,
  ): void {
    const parts = all.filter((p) => settings.sources.includes(p.source));
    const result = scanParts(parts, { threshold: settings.threshold });
    const verdict: ProtectionVerdict =
      result.verdict !== 'injection' ? 'pass' : settings.action === 'block' ? 'blocked' : 'flagged';
    const score = result.score.toFixed(2);
    // Set now, before anything is written: JSON, SSE and error responses all carry it.
    res.setHeader(PROTECTIONS_HEADER, `${PROMPT_INJECTION_TOOL}=${verdict};score=${score}`);
    this.health.record(verdict);
    if (verdict === 'pass' || result.max === undefined) {
      return;
    }
    const part = parts[result.max.index];
    const signals = result.max.signals.slice(0, TOP_SIGNALS).map((s) => s.name);
    const signalList = signals.length > 0 ? signals.join(', ') : 'none';
    // Never the text: where it was, the score and the signal names only.
    this.logger.warn(
      `prompt_injection_protection ${verdict} request ${req.ctx?.requestId ?? '-'}: ${part.where} (${part.source}) score=${score} threshold=${settings.threshold} signals=${signalList}`,
    );
    if (verdict === 'blocked') {
      throw new PromptInjectionDetectedError(
        `Request blocked by ${PROMPT_INJECTION_TOOL} (prompt_injection_detected): ${part.where} scored ${score} (threshold ${settings.threshold}); signals: ${signalList}.`,
        paramOf(part.where),
      );
    }
  }
}
