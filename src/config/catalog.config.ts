import { registerAs } from '@nestjs/config';
import { Expose, Type } from 'class-transformer';
import { IsInt, IsString, Min } from 'class-validator';
import { readNamespace } from './validate-env';

/** Where the model catalog lives, and the embedded local model's pace. */
export class CatalogEnv {
  @Expose() @IsString() CATALOG_PATH = 'config/catalog.yaml';
  /** Delay between two tokens of the embedded local models (0 = as fast as possible). */
  @Expose() @Type(() => Number) @IsInt() @Min(0) LOCAL_MODEL_TOKEN_DELAY_MS = 20;
}

export interface CatalogConfig {
  path: string;
  localTokenDelayMs: number;
}

export const catalogConfig = registerAs('catalog', (): CatalogConfig => {
  const env = readNamespace(CatalogEnv);
  return { path: env.CATALOG_PATH, localTokenDelayMs: env.LOCAL_MODEL_TOKEN_DELAY_MS };
});
