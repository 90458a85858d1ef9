import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
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
  // GET /v1/models reads the key's model scope from the request (the global AuthGuard put
  // the key there), so the catalog needs nothing of the auth module.
  imports: [DiscoveryModule],
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
