import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { CatalogModule } from '../catalog/catalog.module';
import { ProviderRegistry } from './provider-registry';
import { AnthropicDriver } from './providers/anthropic/anthropic.provider';
import { LocalDriver } from './providers/local/local.provider';
import { OpenAiCompatibleDriver, OpenAiDriver } from './providers/openai/openai.provider';
import { UpstreamHttpClient } from './upstream-http.client';

/**
 * Upstream calls: the shared HTTP client, one driver per provider kind (discovered by
 * the registry through @ProviderDriverFor), and the registry itself.
 */
@Module({
  imports: [DiscoveryModule, CatalogModule],
  providers: [
    UpstreamHttpClient,
    ProviderRegistry,
    OpenAiDriver,
    OpenAiCompatibleDriver,
    AnthropicDriver,
    LocalDriver,
  ],
  exports: [ProviderRegistry, UpstreamHttpClient],
})
export class UpstreamModule {}
