import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { buildOpenApiDocument, type OpenApiDocument } from './openapi.document';
import { OpenApiController } from './openapi.controller';
import { OPENAPI_DOCUMENT } from './openapi.module-tokens';

/** The repository (or image) root: two levels above this file in src/ and in dist/. */
const ROOT = join(__dirname, '..', '..');

/**
 * The OpenAPI 3.1 document and its rendered reference. The admin API's document, when
 * `docs/admin-openapi.(json|yaml)` exists, is merged in. Built on the first request, not at
 * boot: parsing the admin YAML alone cost ~90 ms of every cold start, and most replicas
 * are never asked for the document. A broken one answers 500 and is logged; CI builds the
 * shipped one (test/openapi.e2e-spec.ts).
 */
@Module({
  controllers: [OpenApiController],
  providers: [
    {
      provide: OPENAPI_DOCUMENT,
      useFactory: (): (() => OpenApiDocument) => {
        let document: OpenApiDocument | undefined;
        return () => {
          if (document === undefined) {
            const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
              version: string;
            };
            document = buildOpenApiDocument(pkg.version, join(ROOT, 'docs'));
          }
          return document;
        };
      },
    },
  ],
})
export class OpenApiModule {}
