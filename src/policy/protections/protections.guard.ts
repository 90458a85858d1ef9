import {
  type CanActivate,
  type ExecutionContext,
  Injectable,
  SetMetadata,
  UseGuards,
  applyDecorators,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Reflector } from '@nestjs/core';
import { InvalidRequestError } from '../../common/errors/gateway-errors';
import type { GatewayRequest, GatewayResponse } from '../../common/request-context';
import type { AllConfig, ProtectionsConfig } from '../../config';
import {
  type InjectionSettings,
  defaultInjectionSettings,
  parseInjectionSettings,
} from './injection-settings';
import { JudgeClient } from './judge/judge-client';
import { PromptInjectionCheck } from './prompt-injection.check';
import {
  PROMPT_INJECTION_TOOL,
  PROTECTION_TOOLS,
  type ProtectionExtractor,
  type ProtectionTool,
  SHADOW_AGENT_TOOL,
  SYSTEM_PROMPT_FILTER_TOOL,
  stripProtectionTools,
} from './protection-facts';
import { ProtectionReport } from './protection-report';
import { writeProtectionUsage } from './protection-usage';
import {
  type ShadowSettings,
  defaultShadowSettings,
  parseShadowSettings,
} from './shadow-agent/settings';
import {
  type FilterSettings,
  defaultFilterSettings,
  parseFilterSettings,
} from './system-prompt-filter/settings';

const PROTECTIONS = 'gateway:protections';

/** What a request's protection tools (or the operator's forced ones) turned on. */
export interface ProtectionPlan {
  report: ProtectionReport;
  /** `system_prompt_filter`, when on. */
  filter?: FilterSettings;
  /** `shadow_agent_validation`, when on, with its judge model resolved. */
  shadow?: ShadowSettings & { model: string };
}

/** Plans by request; a WeakMap keeps the plan off the shared request type. */
const plans = new WeakMap<object, ProtectionPlan>();

/** The protections of a request, when any is on (set by ProtectionsGuard). */
export function protectionPlanOf(req: GatewayRequest): ProtectionPlan | undefined {
  return plans.get(req);
}

/**
 * Turns on the protections a request names in its tools, reading the body with the
 * format's pure `extractor`. Place it between `@RequestLimits(...)` and
 * `@RequireSystemPrompt(...)`: guards run in the order S1, protections, limits, so the
 * protection tools are stripped before the limits count tools and tokens, and a blocked
 * request costs the client no quota.
 */
export const Protections = (extractor: ProtectionExtractor): MethodDecorator =>
  applyDecorators(SetMetadata(PROTECTIONS, extractor), UseGuards(ProtectionsGuard));

/** The extractor a handler declared, if any (for tests and tooling). */
export function protectionsExtractorOf(handler: object): ProtectionExtractor | undefined {
  return Reflect.getMetadata(PROTECTIONS, handler) as ProtectionExtractor | undefined;
}

function duplicate(
  name: string,
  first: ProtectionTool,
  second: ProtectionTool,
): InvalidRequestError {
  const at = (t: ProtectionTool): string => `${t.field ?? 'tools'}[${t.index}]`;
  return new InvalidRequestError(
    `'${name}' is defined more than once (${at(first)} and ${at(second)}).`,
    at(second),
    'invalid_protection_settings',
  );
}

/**
 * Reads the protection tools: settings (400 naming a bad one), strips them from the body,
 * runs `prompt_injection_protection` at once and leaves the outgoing protections to the
 * services through {@link protectionPlanOf}.
 */
@Injectable()
export class ProtectionsGuard implements CanActivate {
  private readonly config: ProtectionsConfig;
  private readonly forced: ReadonlySet<string>;

  constructor(
    private readonly reflector: Reflector,
    private readonly injection: PromptInjectionCheck,
    private readonly judge: JudgeClient,
    config: ConfigService<AllConfig, true>,
  ) {
    this.config = config.get('protections', { infer: true });
    this.forced = new Set(this.config.forced);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const extractor = this.reflector.get<ProtectionExtractor | undefined>(
      PROTECTIONS,
      context.getHandler(),
    );
    if (!extractor) {
      return true;
    }
    const http = context.switchToHttp();
    const req = http.getRequest<GatewayRequest>();
    const res = http.getResponse<GatewayResponse>();
    const body: unknown = req.body;

    const chosen = extractor
      .toolChoiceNames(body)
      .find((n) => PROTECTION_TOOLS.includes(n as never));
    if (chosen !== undefined) {
      throw new InvalidRequestError(
        `'tool_choice' names '${chosen}', a gateway protection, not a tool the model can call.`,
        'tool_choice',
        'invalid_tool_choice',
      );
    }
    const found = extractor.tools(body, PROTECTION_TOOLS);
    const byName = new Map<string, ProtectionTool>();
    for (const tool of found) {
      const first = byName.get(tool.name);
      if (first) {
        throw duplicate(tool.name, first, tool);
      }
      byName.set(tool.name, tool);
    }
    const on = (name: string): boolean => byName.has(name) || this.forced.has(name);
    if (!PROTECTION_TOOLS.some(on)) {
      return true;
    }

    // Every setting is read before anything runs: a bad one is a 400 that costs nothing.
    const plan: ProtectionPlan = { report: new ProtectionReport() };
    const injection = on(PROMPT_INJECTION_TOOL)
      ? this.injectionSettings(byName.get(PROMPT_INJECTION_TOOL))
      : undefined;
    if (on(SYSTEM_PROMPT_FILTER_TOOL)) {
      const tool = byName.get(SYSTEM_PROMPT_FILTER_TOOL);
      const defaults = defaultFilterSettings(this.config.systemPromptFilterMinOverlap);
      plan.filter = tool ? parseFilterSettings(tool.schema, tool.schemaParam, defaults) : defaults;
    }
    if (on(SHADOW_AGENT_TOOL)) {
      plan.shadow = this.shadowSettings(byName.get(SHADOW_AGENT_TOOL));
    }
    if (stripProtectionTools(body, found)) {
      // The fast paths forward the client's bytes when nothing changed: they changed.
      req.rawBody = undefined;
    }
    plans.set(req, plan);
    try {
      if (injection) {
        await this.injection.run(extractor.parts(body), injection, req, res, plan.report);
      }
      // Listed in the order they run; the services settle them once the answer is out.
      if (plan.filter) {
        plan.report.set(SYSTEM_PROMPT_FILTER_TOOL, 'pending');
      }
      if (plan.shadow) {
        plan.report.set(SHADOW_AGENT_TOOL, 'pending');
      }
    } finally {
      // Set now, before anything is written: JSON, SSE and error responses all carry it.
      req.ctx.protections = plan.report.toString();
      plan.report.writeTo(res);
      writeProtectionUsage(req, res);
    }
    return true;
  }

  private injectionSettings(tool: ProtectionTool | undefined): InjectionSettings {
    const defaults = defaultInjectionSettings(
      this.config.promptInjectionThreshold,
      this.config.promptInjectionDetectorModel,
    );
    const settings = tool
      ? parseInjectionSettings(tool.schema, tool.schemaParam, defaults)
      : defaults;
    if (settings.detectorModel !== undefined) {
      this.judge.resolve(
        settings.detectorModel,
        settings.detectorModelParam ?? 'PROMPT_INJECTION_DETECTOR_MODEL',
      );
    }
    return settings;
  }

  private shadowSettings(tool: ProtectionTool | undefined): ShadowSettings & { model: string } {
    const defaults = defaultShadowSettings(
      this.config.shadowAgentModel,
      this.config.shadowAgentTimeoutMs,
    );
    const settings = tool
      ? parseShadowSettings(
          tool.schema,
          tool.schemaParam,
          tool.description,
          tool.descriptionParam ?? 'tools',
          defaults,
        )
      : defaults;
    if (settings.model === undefined) {
      throw new InvalidRequestError(
        `'${SHADOW_AGENT_TOOL}' needs a judge model: set a 'model' setting in the tool's schema (the operator configured no SHADOW_AGENT_MODEL).`,
        tool?.schemaParam ?? 'tools',
        'invalid_protection_settings',
      );
    }
    this.judge.resolve(settings.model, settings.modelParam ?? 'SHADOW_AGENT_MODEL');
    return { ...settings, model: settings.model };
  }
}
