import type { ConfigService } from '@nestjs/config';
import type { AllConfig } from '../config';

/** A ConfigService-like fake for specs: `get(namespace)` returns that namespace's values. */
export function fakeAuthConfig(
  apiKeys: string[],
  nodeEnv: AllConfig['app']['nodeEnv'] = 'test',
  devApiKey?: string,
): ConfigService<AllConfig, true> {
  const values: Partial<AllConfig> = {
    auth: { apiKeys, devApiKey },
    app: {
      nodeEnv,
      port: 3000,
      host: '0.0.0.0',
      listenBacklog: 4096,
      logLevel: 'info',
      maxBodySize: '10mb',
      shutdownTimeoutMs: 0,
      shutdownDrainDelayMs: 0,
      sseKeepaliveMs: 15000,
      corsOrigins: [],
      trustProxy: false,
    },
  };
  return {
    get: (ns: keyof AllConfig) => values[ns],
  } as unknown as ConfigService<AllConfig, true>;
}
