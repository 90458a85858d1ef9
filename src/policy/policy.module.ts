import { Module } from '@nestjs/common';
import { ProtectionsModule } from './protections/protections.module';

/** Request rules applied before any upstream call: S1 and the protections a request turns on. */
@Module({
  imports: [ProtectionsModule],
  exports: [ProtectionsModule],
})
export class PolicyModule {}
