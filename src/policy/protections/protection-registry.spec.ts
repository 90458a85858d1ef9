import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { DiscoveryModule } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AllConfig } from '../../config';
import { type Protection, RegisterProtection } from './protection';
import { ProtectionRegistry } from './protection-registry';
import { ProtectionsHealth } from './protections-health';

@RegisterProtection({ order: 20 })
@Injectable()
class Second implements Protection {
  readonly name = 'second_protection';
  settings(): undefined {
    return undefined;
  }
}

@RegisterProtection({ order: 10 })
@Injectable()
class First implements Protection {
  readonly name = 'first_protection';
  settings(): undefined {
    return undefined;
  }
}

async function registry(forced: string[]): Promise<ProtectionRegistry> {
  const config = { get: () => ({ forced }) } as unknown as ConfigService<AllConfig, true>;
  const moduleRef = await Test.createTestingModule({
    imports: [DiscoveryModule],
    providers: [
      ProtectionRegistry,
      ProtectionsHealth,
      Second,
      First,
      { provide: ConfigService, useValue: config },
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef.get(ProtectionRegistry);
}

describe('ProtectionRegistry', () => {
  it('finds the registered protections in run order and lists them in the health counters', async () => {
    const reg = await registry(['second_protection']);
    expect(reg.toolNames()).toEqual(['first_protection', 'second_protection']);
    expect(reg.isForced('second_protection')).toBe(true);
    expect(reg.isForced('first_protection')).toBe(false);
  });

  it('stops the boot when PROTECTIONS_FORCE names no registered protection', async () => {
    await expect(registry(['pii_filter'])).rejects.toThrow(
      /PROTECTIONS_FORCE names no protection: pii_filter/,
    );
  });
});
