import { parseCatalog } from '../../../catalog/catalog.loader';
import { BEDROCK } from '../bedrock/bedrock.provider';
import { VERTEX } from './vertex.provider';
import {
  VERTEX_ANTHROPIC_VERSION,
  modelSegment,
  toVertexMessagesBody,
  vertexAnthropicBody,
} from './vertex-body';

const KINDS = new Map([BEDROCK, VERTEX].map((d) => [d.kind, d]));

describe('Vertex Claude bodies', () => {
  it('moves the version into the body and the model out, every other field kept (golden)', () => {
    const client = {
      model: 'claude-sonnet-4-5@20250929',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      some_new_field: { kept: true },
    };
    const expected = {
      anthropic_version: VERTEX_ANTHROPIC_VERSION,
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      some_new_field: { kept: true },
    };
    expect(vertexAnthropicBody(client)).toEqual(expected);
    expect(client.model).toBe('claude-sonnet-4-5@20250929');
    expect(JSON.parse(toVertexMessagesBody(Buffer.from(JSON.stringify(client))))).toEqual(expected);
  });

  it('keeps the @ of a versioned model id in its path segment, escapes the rest', () => {
    expect(modelSegment('claude-sonnet-4-5@20250929')).toBe('claude-sonnet-4-5@20250929');
    expect(modelSegment('a/b?c')).toBe('a%2Fb%3Fc');
  });
});

describe('cloud provider entries in the catalog', () => {
  const model = (provider: string, api = ''): string =>
    `  - { id: m-${provider}, provider: ${provider}, family: anthropic, context_window: 1000, max_output_tokens: 100, pricing: { input: 1, output: 1 }${api} }\n`;

  it('default each base URL from the region or location, and need no key', () => {
    const catalog = parseCatalog(
      `providers:
  - { name: aws, kind: bedrock, region: eu-west-3 }
  - { name: gcp, kind: vertex, project: p1, location: europe-west1 }
  - { name: gcp-global, kind: vertex, project: p1, location: global }
models:
${model('aws')}${model('gcp')}${model('gcp-global', ', upstream_api: gemini')}`,
      {},
      'catalog',
      KINDS,
    );
    expect(catalog.providers.get('aws')).toMatchObject({
      baseUrl: 'https://bedrock-runtime.eu-west-3.amazonaws.com',
      settings: { region: 'eu-west-3' },
      available: true,
    });
    expect(catalog.providers.get('gcp')?.baseUrl).toBe(
      'https://europe-west1-aiplatform.googleapis.com',
    );
    expect(catalog.providers.get('gcp-global')?.baseUrl).toBe('https://aiplatform.googleapis.com');
    expect(catalog.models.get('m-aws')?.upstreamApi).toBe('converse');
    expect(catalog.models.get('m-gcp')?.upstreamApi).toBe('messages');
    expect(catalog.models.get('m-gcp-global')?.upstreamApi).toBe('gemini');
  });

  it('require the region, the project and the location, and a known publisher', () => {
    const problems = (text: string): string => {
      try {
        parseCatalog(text, {}, 'catalog', KINDS);
      } catch (e) {
        return (e as Error).message;
      }
      return '';
    };
    expect(
      problems(`providers:
  - { name: aws, kind: bedrock }
  - { name: gcp, kind: vertex, location: us-east5 }
models:
${model('aws')}${model('gcp')}`),
    ).toMatch(/providers\[0\]\.region: required[\s\S]*providers\[1\]\.project: required/);
    expect(
      problems(`providers:
  - { name: gcp, kind: vertex, project: p, location: us-east5 }
models:
${model('gcp', ', upstream_api: chat_completions')}`),
    ).toMatch(
      /upstream_api: 'chat_completions' does not fit provider kind 'vertex' \(use messages or gemini\)/,
    );
  });
});
