import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryService } from '@nestjs/core';
import type { AllConfig } from '../../../../config';
import { invalidSetting } from '../../protection-settings';
import { type InjectionDetectorBackend, RegisterInjectionDetector } from './detector-backend';

/** Every registered injection detector backend, by name, found at boot. */
@Injectable()
export class InjectionDetectors implements OnModuleInit {
  private readonly logger = new Logger('Protections');
  private readonly byName = new Map<string, InjectionDetectorBackend>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly config: ConfigService<AllConfig, true>,
  ) {}

  onModuleInit(): void {
    const providers = this.discovery.getProviders({ metadataKey: RegisterInjectionDetector.KEY });
    for (const wrapper of providers) {
      const backend = wrapper.instance as InjectionDetectorBackend | undefined;
      if (backend !== undefined && backend !== null) {
        this.byName.set(backend.name, backend);
      }
    }
    const fallback = this.config.get('protections', { infer: true }).promptInjectionDetectors
      .defaultBackend;
    if (!this.byName.has(fallback)) {
      throw new Error(
        `PROMPT_INJECTION_DETECTOR: '${fallback}' is no detector backend (known: ${this.names().join(', ')}).`,
      );
    }
    this.logger.log(`prompt injection detectors: ${this.names().join(', ')}; default ${fallback}`);
  }

  names(): string[] {
    return [...this.byName.keys()].sort();
  }

  /** The backend called `name`; a 400 naming `param` when there is none. */
  get(name: string, param: string): InjectionDetectorBackend {
    const backend = this.byName.get(name);
    if (backend === undefined) {
      throw invalidSetting(
        param,
        `unknown detector ${JSON.stringify(name)}; expected ${this.names().join(', ')}.`,
      );
    }
    return backend;
  }
}
