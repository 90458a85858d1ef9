import { Module } from '@nestjs/common';
import { ProtectionsModule } from './protections/protections.module';
import { SystemPromptGuard } from './system-prompt.guard';

/** Request rules applied before any upstream call: S1 and the protections a request turns on. */
@Module({
  imports: [ProtectionsModule],
  providers: [SystemPromptGuard],
  exports: [SystemPromptGuard, ProtectionsModule],
})
export class PolicyModule {}
