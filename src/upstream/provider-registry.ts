import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { CatalogProvider, ProviderKind } from '../catalog/catalog.types';
import { CatalogService } from '../catalog/catalog.service';
import type { ProviderDriver, UpstreamProvider } from './provider.interface';

/**
 * Class decorator for a provider driver. Provider modules declare their driver with it;
 * the registry discovers every driver at boot, so adding a provider edits no switch.
 */
export const ProviderDriverFor = DiscoveryService.createDecorator<ProviderKind>();

/** One UpstreamProvider per catalog provider entry, built by the driver of its kind. */
@Injectable()
export class ProviderRegistry implements OnModuleInit {
  private readonly logger = new Logger(ProviderRegistry.name);
  private readonly providers = new Map<string, UpstreamProvider>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly catalog: CatalogService,
  ) {}

  onModuleInit(): void {
    const drivers = new Map<ProviderKind, ProviderDriver>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: ProviderDriverFor.KEY })) {
      const kind = this.discovery.getMetadataByDecorator(ProviderDriverFor, wrapper);
      if (kind !== undefined && wrapper.instance) {
        drivers.set(kind, wrapper.instance as ProviderDriver);
      }
    }
    const missing: string[] = [];
    for (const config of this.catalog.providers()) {
      const driver = drivers.get(config.kind);
      if (!driver) {
        missing.push(`${config.name} (kind ${config.kind})`);
        continue;
      }
      this.providers.set(config.name, driver.create(config));
    }
    if (missing.length > 0) {
      throw new Error(`No provider driver registered for: ${missing.join(', ')}`);
    }
    this.logger.log(`providers ready: ${[...this.providers.keys()].join(', ')}`);
  }

  get(config: CatalogProvider): UpstreamProvider {
    const provider = this.providers.get(config.name);
    if (!provider) {
      throw new Error(`provider '${config.name}' is not registered`);
    }
    return provider;
  }
}
