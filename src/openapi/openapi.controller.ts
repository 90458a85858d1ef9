import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Controller, Get, Header, Inject, Param, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../common/public.decorator';
import { RouteNotFoundError } from '../common/errors/gateway-errors';
import { own } from '../common/own';
import { OPENAPI_DOCUMENT, type OpenApiDocument } from './openapi.module-tokens';

/** The files of swagger-ui-dist the page loads; nothing else of the package is served. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Reasoning Inference Gateway API</title>
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an online validator.
const INIT = `window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  validatorUrl: null,
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: 'StandaloneLayout',
});
`;

/**
 * `GET /openapi.json` and the rendered reference at `/docs`, both public. The page and its
 * assets come from the swagger-ui-dist package in node_modules, so a cluster without
 * internet access renders it too, and nothing is fetched from elsewhere.
 */
@Controller()
@Public()
export class OpenApiController {
  private readonly assetsDir = dirname(require.resolve('swagger-ui-dist/package.json'));
  private readonly cache = new Map<string, Buffer>();

  constructor(@Inject(OPENAPI_DOCUMENT) private readonly document: () => OpenApiDocument) {}

  @Get('openapi.json')
  @Header('cache-control', 'no-cache')
  openapi(): OpenApiDocument {
    return this.document();
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  @Header(
    'content-security-policy',
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
  )
  page(): string {
    return PAGE;
  }

  @Get('docs/:asset')
  asset(@Param('asset') name: string, @Req() req: Request, @Res() res: Response): void {
    if (name === 'init.js') {
      res.type('text/javascript; charset=utf-8').send(INIT);
      return;
    }
    const type = own(ASSETS, name);
    if (type === undefined) {
      throw new RouteNotFoundError(req.method, req.path);
    }
    let body = this.cache.get(name);
    if (body === undefined) {
      body = readFileSync(join(this.assetsDir, name));
      this.cache.set(name, body);
    }
    res.setHeader('cache-control', 'public, max-age=86400');
    res.type(type).send(body);
  }
}
