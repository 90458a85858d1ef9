import { Module } from '@nestjs/common';
import { SystemPromptGuard } from './system-prompt.guard';

/** Request rules applied before any upstream call (S1 now; protections later). */
@Module({
  providers: [SystemPromptGuard],
  exports: [SystemPromptGuard],
})
export class PolicyModule {}
