import { Controller, Get, Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Public } from '../../common/public.decorator';
import { CatalogModule } from '../../catalog/catalog.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { JudgeClient } from './judge/judge-client';
import { OutputProtections } from './output-protections';
import { PromptInjectionCheck } from './prompt-injection/prompt-injection.check';
import { InjectionDetectors } from './prompt-injection/backends/detector-registry';
import { HttpClassifierDetector } from './prompt-injection/backends/http-classifier.backend';
import { JudgeDetector } from './prompt-injection/backends/judge.backend';
import { LocalDetector } from './prompt-injection/backends/local.backend';
import { ProtectionsGate } from './protections.gate';
import { ProtectionRegistry } from './protection-registry';
import { PromptInjectionProtection } from './prompt-injection/prompt-injection.protection';
import { ShadowAgentProtection } from './shadow-agent/shadow-agent.protection';
import { SystemPromptFilterProtection } from './system-prompt-filter/system-prompt-filter.protection';
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

/**
 * Protections a request turns on with a tool definition. Each protection owns its
 * settings, boot checks (its own onModuleInit), tool name and messages; this module only
 * lists them for the registry.
 */
@Module({
  imports: [CatalogModule, UpstreamModule, DiscoveryModule],
  controllers: [ProtectionsHealthController],
  providers: [
    ProtectionsHealth,
    JudgeClient,
    PromptInjectionCheck,
    InjectionDetectors,
    // The injection detector backends; InjectionDetectors finds them by their mark.
    LocalDetector,
    HttpClassifierDetector,
    JudgeDetector,
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
export class ProtectionsModule {}
