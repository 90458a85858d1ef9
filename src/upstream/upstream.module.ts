import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule } from '@nestjs/core';
import { CatalogModule } from '../catalog/catalog.module';
import { CatalogService } from '../catalog/catalog.service';
import type { AllConfig } from '../config';
import { ProviderRegistry } from './provider-registry';
import { AnthropicDriver } from './providers/anthropic/anthropic.provider';
import { AzureOpenAiDriver } from './providers/azure-openai/azure-openai.provider';
import { BedrockDriver } from './providers/bedrock/bedrock.provider';
import { GeminiDriver } from './providers/gemini/gemini.provider';
import { LocalDriver } from './providers/local/local.provider';
import { OpenAiCompatibleDriver, OpenAiDriver } from './providers/openai/openai.provider';
import { VertexDriver } from './providers/vertex/vertex.provider';
import { Redactor } from './redactor';
import { UpstreamHttpClient } from './upstream-http.client';

/**
 * Upstream calls: the shared HTTP client (with the redactor of every configured secret),
 * one driver per provider kind (discovered by the registry through @ProviderDriverFor),
 * and the registry itself.
 */
@Module({
  imports: [DiscoveryModule, CatalogModule],
  providers: [
    {
      provide: Redactor,
      inject: [ConfigService, CatalogService],
      useFactory: (config: ConfigService<AllConfig, true>, catalog: CatalogService) =>
        Redactor.fromConfig(config, catalog),
    },
    UpstreamHttpClient,
    ProviderRegistry,
    OpenAiDriver,
    OpenAiCompatibleDriver,
    AnthropicDriver,
    LocalDriver,
    AzureOpenAiDriver,
    GeminiDriver,
    BedrockDriver,
    VertexDriver,
  ],
  exports: [ProviderRegistry, UpstreamHttpClient, Redactor],
})
export class UpstreamModule {}
