import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryService } from '@nestjs/core';
import type { AllConfig } from '../../config';
import { type Protection, RegisterProtection } from './protection';
import { ProtectionsHealth } from './protections-health';

/** Every registered protection, in run order, found at boot. */
@Injectable()
export class ProtectionRegistry implements OnModuleInit {
  private readonly logger = new Logger('Protections');
  private list: Protection[] = [];
  private names: string[] = [];
  private forcedNames = new Set<string>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly health: ProtectionsHealth,
    private readonly config: ConfigService<AllConfig, true>,
  ) {}

  onModuleInit(): void {
    const found: { order: number; protection: Protection }[] = [];
    for (const wrapper of this.discovery.getProviders({ metadataKey: RegisterProtection.KEY })) {
      const meta = this.discovery.getMetadataByDecorator(RegisterProtection, wrapper);
      if (meta !== undefined && wrapper.instance) {
        found.push({ order: meta.order, protection: wrapper.instance as Protection });
      }
    }
    this.list = found.sort((a, b) => a.order - b.order).map((f) => f.protection);
    this.names = this.list.map((p) => p.name);
    for (const name of this.names) {
      this.health.register(name);
    }
    const forced = this.config.get('protections', { infer: true }).forced;
    const unknown = forced.filter((n) => !this.names.includes(n));
    if (unknown.length > 0) {
      throw new Error(
        `PROTECTIONS_FORCE names no protection: ${unknown.join(', ')} (known: ${this.names.join(', ')}).`,
      );
    }
    this.forcedNames = new Set(forced);
    this.logger.log(
      `protections: ${this.names.join(', ')}${forced.length > 0 ? `; forced: ${forced.join(', ')}` : ''}`,
    );
  }

  /** All protections, in run order. */
  all(): readonly Protection[] {
    return this.list;
  }

  /** Their tool names. */
  toolNames(): readonly string[] {
    return this.names;
  }

  isForced(name: string): boolean {
    return this.forcedNames.has(name);
  }
}
