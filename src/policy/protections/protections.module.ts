import { Controller, Get, Module, type OnModuleInit } from '@nestjs/common';
import { Public } from '../../auth/public.decorator';
import { CatalogModule } from '../../catalog/catalog.module';
import { UpstreamModule } from '../../upstream/upstream.module';
import { JudgeClient } from './judge/judge-client';
import { OutputProtections } from './output-protections';
import { PromptInjectionCheck } from './prompt-injection.check';
import { ProtectionsGuard } from './protections.guard';
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
  imports: [CatalogModule, UpstreamModule],
  controllers: [ProtectionsHealthController],
  providers: [
    ProtectionsHealth,
    JudgeClient,
    PromptInjectionCheck,
    ProtectionsGuard,
    OutputProtections,
  ],
  // Guards are instantiated in the modules that use them: their dependencies go too.
  exports: [
    ProtectionsHealth,
    ProtectionsGuard,
    PromptInjectionCheck,
    JudgeClient,
    OutputProtections,
  ],
})
export class ProtectionsModule implements OnModuleInit {
  /** Compiles the detector's patterns at boot, not on the first protected request. */
  onModuleInit(): void {
    warmUpDetector();
  }
}
