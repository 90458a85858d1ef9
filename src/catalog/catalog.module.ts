import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { AuthModule } from '../auth/auth.module';
import type { AllConfig } from '../config';
import { loadCatalog } from './catalog.loader';
import { CATALOG, CatalogService } from './catalog.service';
import { ModelsController } from './models.controller';

/** Loads and validates the catalog file at boot; a bad file stops the boot. */
@Module({
  // For the key's model scope in GET /v1/models.
  imports: [AuthModule],
  controllers: [ModelsController],
  providers: [
    {
      provide: CATALOG,
      inject: [ConfigService],
      useFactory: (config: ConfigService<AllConfig, true>) =>
        loadCatalog(config.get('catalog', { infer: true }).path),
    },
    CatalogService,
  ],
  exports: [CatalogService],
})
export class CatalogModule {}
