import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { buildOpenApiDocument } from './openapi.document';
import { OpenApiController } from './openapi.controller';
import { OPENAPI_DOCUMENT } from './openapi.module-tokens';

/** The repository (or image) root: two levels above this file in src/ and in dist/. */
const ROOT = join(__dirname, '..', '..');

/**
 * The OpenAPI 3.1 document and its rendered reference. The admin API's document, when
 * `docs/admin-openapi.(json|yaml)` exists, is merged in at boot; a broken one stops boot.
 */
@Module({
  controllers: [OpenApiController],
  providers: [
    {
      provide: OPENAPI_DOCUMENT,
      useFactory: () => {
        const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
          version: string;
        };
        return buildOpenApiDocument(pkg.version, join(ROOT, 'docs'));
      },
    },
  ],
})
export class OpenApiModule {}
