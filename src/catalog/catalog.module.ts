import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { AuthModule } from '../auth/auth.module';
import type { AllConfig } from '../config';
import { loadCatalog } from './catalog.loader';
import { discoverProviderKinds } from './provider-kind';
import { CATALOG, CatalogService } from './catalog.service';
import { ModelsController } from './models.controller';

/**
 * Loads and validates the catalog file at boot; a bad file stops the boot. Provider kinds
 * are the descriptors on the drivers the upstream module registers (@ProviderDriverFor).
 */
@Module({
  // AuthModule: for the key's model scope in GET /v1/models.
  imports: [DiscoveryModule, AuthModule],
  controllers: [ModelsController],
  providers: [
    {
      provide: CATALOG,
      inject: [ConfigService, DiscoveryService],
      useFactory: (config: ConfigService<AllConfig, true>, discovery: DiscoveryService) =>
        loadCatalog(config.get('catalog', { infer: true }).path, discoverProviderKinds(discovery)),
    },
    CatalogService,
  ],
  exports: [CatalogService],
})
export class CatalogModule {}
