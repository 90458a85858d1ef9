import { Module } from '@nestjs/common';
import { CatalogModule } from '../catalog/catalog.module';
import { HealthController } from './health.controller';
import { ShutdownState } from './shutdown.state';

@Module({
  imports: [CatalogModule],
  controllers: [HealthController],
  providers: [ShutdownState],
})
export class HealthModule {}
