import { Controller, Get, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule } from '@nestjs/core';
import { CatalogService } from '../../catalog/catalog.service';
import type { AllConfig } from '../../config';
import { Public } from '../../auth/public.decorator';
import { CatalogModule } from '../../catalog/catalog.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { JudgeClient } from './judge/judge-client';
import { OutputProtections } from './output-protections';
import { PromptInjectionCheck } from './prompt-injection/prompt-injection.check';
import { ProtectionsGate } from './protections.gate';
import { ProtectionRegistry } from './protection-registry';
import { PromptInjectionProtection } from './prompt-injection/prompt-injection.protection';
import { ShadowAgentProtection } from './shadow-agent/shadow-agent.protection';
import { SystemPromptFilterProtection } from './system-prompt-filter/system-prompt-filter.protection';
import { warmUpDetector } from './prompt-injection/detector';
import { ProtectionsHealth, type ProtectionsHealthSnapshot } from './protections-health';

/** `GET /health/protections`: how many protected requests passed, were flagged, blocked. */
@Controller('health')
@Public()
export class ProtectionsHealthController {
  constructor(private readonly health: ProtectionsHealth) {}

  @Get('protections')
  protections(): ProtectionsHealthSnapshot {
    return this.health.snapshot();
  }
}

/** Protections a request turns on with a tool definition (issue 6). */
@Module({
  imports: [CatalogModule, UpstreamModule, DiscoveryModule],
  controllers: [ProtectionsHealthController],
  providers: [
    ProtectionsHealth,
    JudgeClient,
    PromptInjectionCheck,
    ProtectionRegistry,
    ProtectionsGate,
    OutputProtections,
    // The protections; the registry finds them by their @RegisterProtection mark.
    PromptInjectionProtection,
    SystemPromptFilterProtection,
    ShadowAgentProtection,
  ],
  // Guards are instantiated in the modules that use them: their dependencies go too.
  exports: [ProtectionsHealth, ProtectionsGate, ProtectionRegistry, OutputProtections],
})
export class ProtectionsModule implements OnModuleInit {
  private readonly logger = new Logger('Protections');

  constructor(
    private readonly catalog: CatalogService,
    private readonly judge: JudgeClient,
    private readonly config: ConfigService<AllConfig, true>,
  ) {}

  /**
   * Compiles the detector's patterns at boot, not on the first protected request, and
   * checks the configured judge models: an unknown id stops the boot (every request using
   * it would fail), one that cannot be called now (a provider without its key) is a warning.
   */
  onModuleInit(): void {
    warmUpDetector();
    const protections = this.config.get('protections', { infer: true });
    const defaults = [
      ['SHADOW_AGENT_MODEL', protections.shadowAgentModel],
      ['PROMPT_INJECTION_DETECTOR_MODEL', protections.promptInjectionDetectorModel],
    ] as const;
    for (const [name, id] of defaults) {
      if (id === undefined) {
        continue;
      }
      if (this.catalog.find(id) === undefined) {
        throw new Error(`${name}: '${id}' is not a model of the catalog.`);
      }
      try {
        this.judge.resolve(id, name);
      } catch (error) {
        this.logger.warn(`${name}: ${(error as Error).message}`);
      }
    }
  }
}
