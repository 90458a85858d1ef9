import { Controller, Get, Module, type OnModuleInit } from '@nestjs/common';
import { Public } from '../../auth/public.decorator';
import { PromptInjectionGuard } from './prompt-injection.guard';
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
  controllers: [ProtectionsHealthController],
  providers: [ProtectionsHealth, PromptInjectionGuard],
  exports: [ProtectionsHealth, PromptInjectionGuard],
})
export class ProtectionsModule implements OnModuleInit {
  /** Compiles the detector's patterns at boot, not on the first protected request. */
  onModuleInit(): void {
    warmUpDetector();
  }
}
