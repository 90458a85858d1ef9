import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import type { Application } from 'express';
import { gatewayDocument, loadAdminDocument, mergeDocument } from '../src/openapi/openapi.document';
import { startGateway, testCatalog, type TestGateway } from './support/gateway';

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
}

/** Every (METHOD, /path/{param}) the running app's Express router has. */
function registeredRoutes(gw: TestGateway): string[] {
  const app = gw.app.getHttpAdapter().getInstance() as Application;
  const stack = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  const routes: string[] = [];
  for (const layer of stack) {
    // Nest binds route-scoped middleware (the usage recorder, the admin body parser) as
    // wildcard entries of the router; the controllers here declare no wildcard routes.
    if (layer.route === undefined || layer.route.path.includes('*')) {
      continue;
    }
    const path = layer.route.path.replace(/:(\w+)/g, '{$1}');
    for (const [method, on] of Object.entries(layer.route.methods)) {
      if (on && method !== '_all') {
        routes.push(`${method.toUpperCase()} ${path}`);
      }
    }
  }
  return routes;
}

function documentedRoutes(doc: { paths: Record<string, object> }): Set<string> {
  const out = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of Object.keys(item)) {
      out.add(`${method.toUpperCase()} ${path}`);
    }
  }
  return out;
}

describe('OpenAPI document and reference', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await startGateway({ CATALOG_PATH: testCatalog('http://127.0.0.1:9') });
  });
  afterAll(() => gw.close());

  it('serves a valid OpenAPI 3.1 document without a key', async () => {
    const res = await fetch(`${gw.origin}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { openapi: string };
    expect(doc.openapi).toBe('3.1.0');
    // validate() dereferences in place: give it a copy.
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
  });

  it('documents every route the app registers', async () => {
    const doc = (await (await fetch(`${gw.origin}/openapi.json`)).json()) as {
      paths: Record<string, object>;
    };
    const routes = registeredRoutes(gw);
    // The enumeration itself must see the app's routes, or this test would prove nothing.
    expect(routes).toEqual(expect.arrayContaining(['POST /v1/chat/completions', 'GET /health']));
    const documented = documentedRoutes(doc);
    expect(routes.filter((r) => !documented.has(r))).toEqual([]);
  });

  it('describes the error envelopes, rate-limit headers and SSE events', () => {
    const doc = gatewayDocument('0.0.0') as unknown as {
      paths: Record<
        string,
        { post: { responses: Record<string, { headers?: object; content?: object }> } }
      >;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
    };
    const messages = doc.paths['/v1/messages'].post.responses;
    expect(messages['200'].headers).toHaveProperty('anthropic-ratelimit-requests-remaining');
    expect(messages['200'].content).toHaveProperty(['text/event-stream']);
    expect(messages['429']).toEqual({ $ref: '#/components/responses/AnthropicError429' });
    const chat = doc.paths['/v1/chat/completions'].post.responses;
    expect(chat['200'].headers).toHaveProperty('x-ratelimit-remaining-tokens');
    expect(doc.components.schemas.MessagesStreamEvent.properties?.type.enum).toContain(
      'content_block_delta',
    );
    expect(doc.components.schemas.ResponsesStreamEvent.properties?.type.enum).toContain(
      'response.output_text.delta',
    );
  });

  it('serves the rendered reference from bundled assets only', async () => {
    const page = await fetch(`${gw.origin}/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(sources.length).toBeGreaterThan(0);
    for (const src of sources) {
      expect(src.startsWith('/docs/')).toBe(true);
      expect((await fetch(`${gw.origin}${src}`)).status).toBe(200);
    }
    const init = await (await fetch(`${gw.origin}/docs/init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    expect(init).toContain('validatorUrl: null');
    expect((await fetch(`${gw.origin}/docs/package.json`)).status).toBe(404);
    expect((await fetch(`${gw.origin}/docs/..%2Fpackage.json`)).status).toBe(404);
  });
});

describe('merging the admin API document', () => {
  const admin = {
    openapi: '3.1.0',
    info: { title: 'admin', version: '1' },
    tags: [{ name: 'Admin' }],
    paths: {
      '/admin/v1/keys': {
        get: {
          tags: ['Admin'],
          security: [{ adminToken: [] }],
          responses: {
            '200': {
              description: 'keys',
              content: { 'application/json': { schema: { $ref: '#/components/schemas/KeyList' } } },
            },
          },
        },
      },
    },
    components: {
      schemas: { KeyList: { type: 'array', items: { type: 'object' } } },
      securitySchemes: { adminToken: { type: 'http', scheme: 'bearer' } },
    },
  };

  it('loads docs/admin-openapi.json or .yaml and merges paths, components and tags into a valid document', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
    expect(loadAdminDocument(dir)).toBeUndefined();
    writeFileSync(
      join(dir, 'admin-openapi.yaml'),
      `openapi: 3.1.0\npaths: ${JSON.stringify(admin.paths)}\ncomponents: ${JSON.stringify(admin.components)}\ntags: [{name: Admin}]\n`,
    );
    const loaded = loadAdminDocument(dir);
    expect(loaded?.file).toMatch(/admin-openapi\.yaml$/);
    const merged = mergeDocument(gatewayDocument('1.0.0'), loaded?.document ?? {}, 'admin');
    expect(merged.paths).toHaveProperty(['/admin/v1/keys']);
    expect(merged.paths).toHaveProperty(['/v1/messages']);
    const result = await validate(structuredClone(merged) as never);
    expect(result.valid ? '' : compileErrors(result)).toBe('');
  });

  it('refuses a document that redefines a gateway path or component', () => {
    expect(() =>
      mergeDocument(gatewayDocument('1'), { paths: { '/health': {} } }, 'admin'),
    ).toThrow(/path \/health is already/);
    expect(() =>
      mergeDocument(
        gatewayDocument('1'),
        { paths: {}, components: { schemas: { OpenAiError: {} } } },
        'admin',
      ),
    ).toThrow(/components.schemas.OpenAiError/);
  });
});
