import { generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GEMINI_KEY, geminiReply } from './fake-gemini';
import { FakeUpstream, type RecordedRequest, type Reply } from './fake-upstream';

/**
 * Google Vertex AI on loopback, with Google's token endpoints beside it:
 * - `/token`: the OAuth JWT-bearer grant of a service account. The assertion is verified
 *   as Google does (RS256 signature against the account's public key, `iss`, `scope`,
 *   `aud` equal to the endpoint it was posted to, `iat`/`exp` within an hour).
 * - the metadata server's `/computeMetadata/v1/instance/service-accounts/default/token`
 *   (GKE Workload Identity), which wants `Metadata-Flavor: Google` and sends it back.
 * - the publisher models: Claude through `rawPredict` / `streamRawPredict` (a Messages body
 *   with `anthropic_version: vertex-2023-10-16` and no `model`), Gemini through
 *   `generateContent` / `streamGenerateContent?alt=sse`; a token it did not issue (or
 *   revoked) is a 401 UNAUTHENTICATED.
 */

export const PROJECT = 'gw-test-project';
export const LOCATION = 'us-east5';
export const CLIENT_EMAIL = 'gateway@gw-test-project.iam.gserviceaccount.com';
export const VERTEX_VERSION = 'vertex-2023-10-16';
export const CLAUDE_USAGE = {
  input_tokens: 25,
  cache_creation_input_tokens: 3,
  cache_read_input_tokens: 5,
  output_tokens: 12,
};

/** The base64url JSON of a JWT part. */
function part(text: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Record<string, unknown>;
}

function googleError(status: number, code: string, message: string): Reply {
  return { status, json: { error: { code: status, message, status: code } } };
}

type Block = Record<string, any>;

/** The Claude answer to a Messages body: a tool call, the tool's output, or a greeting. */
function claudeContent(body: Record<string, any>): { content: Block[]; stop: string } {
  const last = body.messages[body.messages.length - 1];
  const blocks: Block[] = Array.isArray(last.content) ? last.content : [];
  const result = blocks.find((b) => b.type === 'tool_result');
  if (result) {
    const text = typeof result.content === 'string' ? result.content : result.content?.[0]?.text;
    return { content: [{ type: 'text', text: `The tool said: ${text}` }], stop: 'end_turn' };
  }
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    return {
      content: [
        {
          type: 'tool_use',
          id: 'toolu_vrtx_1',
          name: body.tools[0].name,
          input: { city: 'Paris' },
        },
      ],
      stop: 'tool_use',
    };
  }
  return { content: [{ type: 'text', text: 'Hello from Claude on Vertex.' }], stop: 'end_turn' };
}

function claudeEvents(model: string, content: Block[], stop: string): object[] {
  const events: object[] = [
    {
      type: 'message_start',
      message: {
        id: 'msg_vrtx_01',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...CLAUDE_USAGE, output_tokens: 1 },
      },
    },
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      const half = Math.ceil(block.text.length / 2);
      events.push(
        { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text.slice(0, half) },
        },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: block.text.slice(half) },
        },
      );
    } else {
      events.push(
        { type: 'content_block_start', index, content_block: { ...block, input: {} } },
        {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
        },
      );
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: CLAUDE_USAGE.output_tokens },
    },
    { type: 'message_stop' },
  );
  return events;
}

export class FakeVertex {
  readonly upstream = new FakeUpstream();
  /** Tokens issued and still valid. */
  readonly valid = new Set<string>();
  /** JWT-bearer grants asked for (with the verified claims) and metadata tokens fetched. */
  readonly grants: Record<string, unknown>[] = [];
  readonly metadataFetches: RecordedRequest[] = [];
  /** Scripted failures of the next model calls, taken in order. */
  readonly script: Reply[] = [];
  private readonly publicKey: KeyObject;
  private readonly privateKeyPem: string;
  private issued = 0;

  constructor() {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.publicKey = publicKey;
    this.privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  }

  get url(): string {
    return this.upstream.url;
  }

  get tokenUri(): string {
    return `${this.url}/token`;
  }

  /** The service account's private key (a secret no log line may carry). */
  get privateKey(): string {
    return this.privateKeyPem;
  }

  async start(): Promise<this> {
    await this.upstream.start();
    this.routes();
    return this;
  }

  async stop(): Promise<void> {
    await this.upstream.stop();
  }

  /** Forgets the requests and scripts, keeps the issued tokens. */
  reset(): void {
    this.upstream.requests.length = 0;
    this.grants.length = 0;
    this.metadataFetches.length = 0;
    this.script.length = 0;
  }

  /** Every issued token stops working (as when they expire early or are revoked). */
  revokeAll(): void {
    this.valid.clear();
  }

  /** A service-account key file whose `token_uri` is the fake's; `key` signs instead if given. */
  keyFile(key: string = this.privateKeyPem): string {
    const dir = mkdtempSync(join(tmpdir(), 'gw-gcp-'));
    const path = join(dir, 'service-account.json');
    writeFileSync(
      path,
      JSON.stringify({
        type: 'service_account',
        project_id: PROJECT,
        private_key_id: 'f00dfeed0123456789',
        private_key: key,
        client_email: CLIENT_EMAIL,
        client_id: '100000000000000000001',
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: this.tokenUri,
        universe_domain: 'googleapis.com',
      }),
    );
    return path;
  }

  /** Model calls (token requests left out). */
  calls(): RecordedRequest[] {
    return this.upstream.requests.filter((r) => r.path.includes('/publishers/'));
  }

  lastCall(): RecordedRequest {
    const calls = this.calls();
    if (calls.length === 0) {
      throw new Error('the fake Vertex received no model call');
    }
    return calls[calls.length - 1];
  }

  modelPath(publisher: 'anthropic' | 'google', model: string, method: string): string {
    return `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/${publisher}/models/${model}:${method}`;
  }

  private issue(prefix: string): string {
    const token = `ya29.${prefix}-${++this.issued}-${'x'.repeat(40)}`;
    this.valid.add(token);
    return token;
  }

  private grant(req: RecordedRequest): Reply {
    const form = new URLSearchParams(req.raw);
    const invalid = (description: string): Reply => ({
      status: 400,
      json: { error: 'invalid_grant', error_description: description },
    });
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return invalid('Unsupported grant type.');
    }
    const [head, payload, signature] = (form.get('assertion') ?? '').split('.');
    if (signature === undefined) {
      return invalid('Not a JWT.');
    }
    const header = part(head);
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${head}.${payload}`),
      this.publicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (header.alg !== 'RS256' || !signed) {
      return invalid('Invalid JWT Signature.');
    }
    const claims = part(payload);
    const now = Date.now() / 1000;
    const iat = Number(claims.iat);
    const exp = Number(claims.exp);
    if (
      claims.iss !== CLIENT_EMAIL ||
      claims.aud !== this.tokenUri ||
      !String(claims.scope).split(' ').includes('https://www.googleapis.com/auth/cloud-platform') ||
      !(Math.abs(iat - now) < 60) ||
      !(exp > now && exp - iat <= 3600)
    ) {
      return invalid(`Invalid JWT claims: ${JSON.stringify({ ...claims, iat, exp })}`);
    }
    this.grants.push(claims);
    return { json: { access_token: this.issue('sa'), expires_in: 3599, token_type: 'Bearer' } };
  }

  private authorized(req: RecordedRequest): boolean {
    const auth = String(req.headers.authorization ?? '');
    return auth.startsWith('Bearer ') && this.valid.has(auth.slice('Bearer '.length));
  }

  private claude(req: RecordedRequest, stream: boolean): Reply {
    if (!this.authorized(req)) {
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    }
    const scripted = this.script.shift();
    if (scripted !== undefined) {
      return scripted;
    }
    const body = req.body;
    if (body?.anthropic_version !== VERTEX_VERSION || 'model' in body) {
      return {
        status: 400,
        json: {
          type: 'error',
          error: {
            type: 'invalid_request_error',
            message: 'anthropic_version: vertex-2023-10-16 is required; model is not allowed',
          },
        },
      };
    }
    const model = req.path.split('/models/')[1].split(':')[0];
    const { content, stop } = claudeContent(body);
    if (!stream) {
      return {
        json: {
          id: 'msg_vrtx_01',
          type: 'message',
          role: 'assistant',
          model,
          content,
          stop_reason: stop,
          stop_sequence: null,
          usage: CLAUDE_USAGE,
        },
      };
    }
    return {
      sse: claudeEvents(model, content, stop).map((e) => ({
        event: (e as { type: string }).type,
        data: e,
      })),
    };
  }

  private gemini(req: RecordedRequest, stream: boolean): Reply {
    if (!this.authorized(req)) {
      return googleError(401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
    }
    const scripted = this.script.shift();
    if (scripted !== undefined) {
      return scripted;
    }
    // The Gemini fake checks its key header; Vertex authorizes by the bearer token instead.
    return geminiReply(
      { ...req, headers: { ...req.headers, 'x-goog-api-key': GEMINI_KEY } },
      stream,
    );
  }

  private routes(): void {
    this.upstream.on('/token', (req) => this.grant(req));
    this.upstream.on('/computeMetadata/v1/instance/service-accounts/default/token', (req) => {
      this.metadataFetches.push(req);
      if (req.headers['metadata-flavor'] !== 'Google') {
        return { text: 'Missing Metadata-Flavor:Google header.', status: 403 };
      }
      return {
        headers: { 'metadata-flavor': 'Google' },
        json: { access_token: this.issue('meta'), expires_in: 3599, token_type: 'Bearer' },
      };
    });
  }

  /** Serves `model` of `publisher` at its four paths. */
  serve(publisher: 'anthropic' | 'google', model: string): this {
    if (publisher === 'anthropic') {
      this.upstream.on(this.modelPath(publisher, model, 'rawPredict'), (r) =>
        this.claude(r, false),
      );
      this.upstream.on(this.modelPath(publisher, model, 'streamRawPredict'), (r) =>
        this.claude(r, true),
      );
    } else {
      this.upstream.on(this.modelPath(publisher, model, 'generateContent'), (r) =>
        this.gemini(r, false),
      );
      this.upstream.on(this.modelPath(publisher, model, 'streamGenerateContent'), (r) =>
        this.gemini(r, true),
      );
    }
    return this;
  }
}
