import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { CatalogProvider } from '../catalog/catalog.types';
import { CatalogService } from '../catalog/catalog.service';
import { ProviderDriverFor } from '../catalog/provider-kind';
import type { ProviderDriver, UpstreamProvider } from './provider.interface';

/**
 * One UpstreamProvider per catalog provider entry, built by the driver of its kind: the
 * drivers are found at boot by their @ProviderDriverFor mark, so adding one edits no switch.
 */
@Injectable()
export class ProviderRegistry implements OnModuleInit {
  private readonly logger = new Logger(ProviderRegistry.name);
  private readonly providers = new Map<string, UpstreamProvider>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly catalog: CatalogService,
  ) {}

  onModuleInit(): void {
    const drivers = new Map<string, ProviderDriver>();
    for (const wrapper of this.discovery.getProviders({ metadataKey: ProviderDriverFor.KEY })) {
      const descriptor = this.discovery.getMetadataByDecorator(ProviderDriverFor, wrapper);
      if (descriptor !== undefined && wrapper.instance) {
        drivers.set(descriptor.kind, wrapper.instance as ProviderDriver);
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
