import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { own, setOwn } from '../common/own';
import { WIRE_FORMATS } from '../formats/wire-formats';
import {
  GENERATION_ERRORS,
  errorResponses,
  errorsOf,
  generationHeaders,
  headers,
  schemas,
} from './components';

type Obj = Record<string, unknown>;

/** An OpenAPI document as plain data (validated by the tests, not by types). */
export type OpenApiDocument = Obj & { openapi: string; paths: Record<string, Obj> };

/** A file that should hold an OpenAPI document and does not. */
export class OpenApiDocumentError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = 'OpenApiDocumentError';
  }
}

const ref = (name: string): Obj => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: Obj): Obj => ({ 'application/json': { schema } });
const CLIENT_AUTH = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** A 200 that is JSON, or SSE frames of `event` when the body asks for `stream: true`. */
function generationOk(family: 'openai' | 'anthropic', answer: string, event: string): Obj {
  return {
    description: `The answer as JSON; with \`stream: true\`, server-sent events whose data are ${event}.`,
    headers: generationHeaders(family),
    content: {
      ...json(ref(answer)),
      'text/event-stream': {
        schema: {
          ...ref(event),
          description:
            'Each event is `event: <type>` (Responses, Messages) and `data: <JSON>`; `: keepalive` comments keep idle connections open.',
        },
      },
    },
  };
}

function generation(
  family: 'openai' | 'anthropic',
  summary: string,
  request: string,
  answer: string,
  event: string,
  tag: string,
): Obj {
  const errors = errorsOf(family === 'openai' ? 'OpenAi' : 'Anthropic', GENERATION_ERRORS);
  return {
    post: {
      tags: [tag],
      summary,
      security: CLIENT_AUTH,
      ...(family === 'anthropic'
        ? { parameters: [{ $ref: '#/components/parameters/AnthropicVersion' }] }
        : {}),
      requestBody: { required: true, content: json(ref(request)) },
      responses: { '200': generationOk(family, answer, event), ...errors },
    },
  };
}

const idParam = (description: string): Obj => ({
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string' },
  description,
});

function healthGet(summary: string, schema: string, extra: Obj = {}): Obj {
  return {
    get: {
      tags: ['Health'],
      summary,
      security: [],
      responses: { '200': { description: summary, content: json(ref(schema)) }, ...extra },
    },
  };
}

const paths: Record<string, Obj> = {
  // Each wire format's generation endpoint, from its descriptor.
  ...Object.fromEntries(
    WIRE_FORMATS.map(({ format: { path, envelope, openapi: o } }) => [
      `/${path}`,
      generation(envelope, o.summary, o.request, o.answer, o.event, o.tag),
    ]),
  ),
  '/v1/responses/{id}': {
    get: {
      tags: ['OpenAI'],
      summary: 'Retrieve a stored response from its upstream (the key that made it only)',
      security: CLIENT_AUTH,
      parameters: [idParam('A response id returned by POST /v1/responses.')],
      responses: {
        '200': { description: 'The stored response.', content: json(ref('Response')) },
        ...errorsOf('OpenAi', ['401', '404', '429', '502', '503', '504']),
      },
    },
    delete: {
      tags: ['OpenAI'],
      summary: 'Delete a stored response at its upstream',
      security: CLIENT_AUTH,
      parameters: [idParam('A response id returned by POST /v1/responses.')],
      responses: {
        '200': { description: 'Deleted.', content: json(ref('ResponseDeleted')) },
        ...errorsOf('OpenAi', ['401', '404', '429', '502', '503', '504']),
      },
    },
  },
  '/v1/responses/{id}/input_items': {
    get: {
      tags: ['OpenAI'],
      summary: 'List the input items of a stored response, from its upstream',
      security: CLIENT_AUTH,
      parameters: [idParam('A response id returned by POST /v1/responses.')],
      responses: {
        '200': {
          description: 'A page of input items, as the upstream lists them.',
          content: json({
            type: 'object',
            required: ['object', 'data'],
            properties: { object: { const: 'list' }, data: { type: 'array', items: {} } },
          }),
        },
        ...errorsOf('OpenAi', ['401', '404', '429', '502', '503', '504']),
      },
    },
  },
  '/v1/messages/count_tokens': {
    post: {
      tags: ['Anthropic'],
      summary: 'Count the input tokens of a Messages request',
      security: CLIENT_AUTH,
      requestBody: { required: true, content: json(ref('CountTokensRequest')) },
      responses: {
        '200': { description: 'The count.', content: json(ref('CountTokensResult')) },
        ...errorsOf('Anthropic', ['400', '401', '404', '413', '429', '500', '502', '503']),
      },
    },
  },
  '/v1/models': {
    get: {
      tags: ['Models'],
      summary: 'List the catalog models (OpenAI list, or an Anthropic page with anthropic-version)',
      security: CLIENT_AUTH,
      parameters: [
        { $ref: '#/components/parameters/AnthropicVersion' },
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000 } },
        { name: 'after_id', in: 'query', schema: { type: 'string' } },
        { name: 'before_id', in: 'query', schema: { type: 'string' } },
      ],
      responses: {
        '200': {
          description: 'The models whose provider is configured.',
          content: json({ oneOf: [ref('OpenAiModelList'), ref('AnthropicModelPage')] }),
        },
        ...errorsOf('OpenAi', ['401']),
      },
    },
  },
  '/v1/models/{id}': {
    get: {
      tags: ['Models'],
      summary: 'One catalog model',
      security: CLIENT_AUTH,
      parameters: [
        idParam('A catalog model id.'),
        { $ref: '#/components/parameters/AnthropicVersion' },
      ],
      responses: {
        '200': {
          description: 'The model.',
          content: json({ oneOf: [ref('OpenAiModel'), ref('AnthropicModel')] }),
        },
        ...errorsOf('OpenAi', ['401', '404']),
      },
    },
  },
  '/health': healthGet('Liveness: the process answers.', 'Health'),
  '/health/ready': healthGet(
    'Readiness: the catalog is loaded and the process is not draining.',
    'Health',
    {
      '503': { description: 'Draining after SIGTERM.', content: json(ref('OpenAiError')) },
    },
  ),
  '/health/limits': healthGet('Rate-limit storage and its failure counters.', 'LimitsHealth'),
  '/health/upstreams': {
    get: {
      tags: ['Health'],
      summary: 'Breaker state, load and ejections of every deployment of every model.',
      security: [],
      responses: {
        '200': {
          description:
            '`deployments`: model, provider, upstream_id, weight, state (closed, half_open, open), in_flight, ejections, open_until.',
          content: json({ type: 'object' }),
        },
      },
    },
  },
  '/health/protections': {
    get: {
      tags: ['Health'],
      summary: 'The protections and the state of their models.',
      security: [],
      responses: {
        '200': { description: 'One entry per protection.', content: json({ type: 'object' }) },
      },
    },
  },
  '/metrics': {
    get: {
      tags: ['Operations'],
      summary: 'Prometheus metrics (also on METRICS_PORT without a token)',
      security: [{ metricsToken: [] }],
      responses: {
        '200': {
          description: 'Prometheus text exposition format.',
          content: { 'text/plain': { schema: { type: 'string' } } },
        },
        '401': {
          description: 'Missing or wrong metrics token.',
          content: json(ref('OpenAiError')),
        },
        '404': { description: 'METRICS_TOKEN is not set.', content: json(ref('OpenAiError')) },
      },
    },
  },
  '/openapi.json': {
    get: {
      tags: ['Operations'],
      summary: 'This document',
      security: [],
      responses: { '200': { description: 'OpenAPI 3.1', content: json({ type: 'object' }) } },
    },
  },
  '/docs': {
    get: {
      tags: ['Operations'],
      summary: 'The rendered API reference (HTML)',
      security: [],
      responses: {
        '200': {
          description: 'HTML page.',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
      },
    },
  },
  '/docs/{asset}': {
    get: {
      tags: ['Operations'],
      summary: 'Script and style assets of the reference page, served from the image',
      security: [],
      parameters: [{ name: 'asset', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'The asset.', content: { '*/*': { schema: { type: 'string' } } } },
        '404': { description: 'No such asset.' },
      },
    },
  },
};

/** The gateway's own document, before any merge. */
export function gatewayDocument(version: string): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Reasoning Inference Gateway',
      version,
      description:
        'OpenAI- and Anthropic-compatible LLM gateway: one API, three wire formats, every catalog model. ' +
        'Errors use the envelope of the endpoint called (OpenAI or Anthropic); every response carries `x-request-id`.',
    },
    tags: [
      { name: 'OpenAI', description: 'OpenAI wire formats (OpenAI error envelope).' },
      { name: 'Anthropic', description: 'Anthropic Messages (Anthropic error envelope).' },
      { name: 'Models' },
      { name: 'Health' },
      { name: 'Operations' },
    ],
    paths: structuredClone(paths),
    components: {
      schemas: structuredClone(schemas),
      headers: structuredClone(headers),
      responses: errorResponses(),
      parameters: {
        AnthropicVersion: {
          name: 'anthropic-version',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: 'Sent by Anthropic SDKs; on /v1/models it selects the Anthropic shape.',
        },
      },
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A gateway client key.' },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'A gateway client key (Anthropic SDKs).',
        },
        metricsToken: {
          type: 'http',
          scheme: 'bearer',
          description: 'METRICS_TOKEN; client keys are not accepted.',
        },
      },
    },
  };
}

const COMPONENT_KINDS = [
  'schemas',
  'responses',
  'parameters',
  'headers',
  'securitySchemes',
  'requestBodies',
  'examples',
];

/**
 * Merges another module's document (the admin API's) into `base`: its paths, tags and
 * components. A name both define is an error rather than a silent overwrite.
 */
export function mergeDocument(base: OpenApiDocument, extra: Obj, source: string): OpenApiDocument {
  const extraPaths = (extra.paths ?? {}) as Record<string, Obj>;
  for (const [path, item] of Object.entries(extraPaths)) {
    if (Object.hasOwn(base.paths, path)) {
      throw new OpenApiDocumentError(source, `path ${path} is already in the gateway document`);
    }
    setOwn(base.paths, path, item);
  }
  const baseComponents = (base.components ??= {}) as Record<string, Obj>;
  const extraComponents = (extra.components ?? {}) as Record<string, Obj>;
  for (const kind of COMPONENT_KINDS) {
    const extraKind = own(extraComponents, kind) ?? {};
    let target = own(baseComponents, kind);
    if (target === undefined) {
      target = {};
      setOwn(baseComponents, kind, target);
    }
    for (const [name, value] of Object.entries(extraKind)) {
      if (Object.hasOwn(target, name)) {
        throw new OpenApiDocumentError(source, `components.${kind}.${name} is already defined`);
      }
      setOwn(target, name, value);
    }
  }
  const tags = (base.tags ?? []) as { name: string }[];
  for (const tag of (extra.tags ?? []) as { name: string }[]) {
    if (!tags.some((t) => t.name === tag.name)) {
      tags.push(tag);
    }
  }
  base.tags = tags;
  return base;
}

/** The names the admin API's document may have (docs/admin-openapi.yaml in this repository). */
export const ADMIN_DOCUMENT_FILES = [
  'admin-openapi.json',
  'admin-openapi.yaml',
  'admin-openapi.yml',
];

/** Reads the first admin document present in `dir`; undefined when there is none. */
export function loadAdminDocument(dir: string): { file: string; document: Obj } | undefined {
  for (const name of ADMIN_DOCUMENT_FILES) {
    const file = join(dir, name);
    if (!existsSync(file)) {
      continue;
    }
    const text = readFileSync(file, 'utf8');
    let parsed: unknown;
    try {
      parsed = name.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    } catch (e) {
      throw new OpenApiDocumentError(file, `not parseable: ${(e as Error).message}`);
    }
    if (
      typeof parsed !== 'object' ||
      parsed === null ||
      typeof (parsed as Obj).paths !== 'object'
    ) {
      throw new OpenApiDocumentError(file, 'not an OpenAPI document (no paths)');
    }
    return { file, document: parsed as Obj };
  }
  return undefined;
}

/** The document served at /openapi.json: the gateway's, plus the admin API's if present. */
export function buildOpenApiDocument(version: string, docsDir: string): OpenApiDocument {
  const document = gatewayDocument(version);
  const admin = loadAdminDocument(docsDir);
  return admin === undefined ? document : mergeDocument(document, admin.document, admin.file);
}
