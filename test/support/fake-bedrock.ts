import { createHash, createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

/**
 * Amazon Bedrock Runtime's Converse and ConverseStream on loopback, as the service
 * documents them (docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html):
 * every request's SigV4 signature is verified here, by an implementation of its own (not
 * the gateway's library), for the expected credentials, region and service; error answers
 * carry `x-amzn-ErrorType` and `{"message"}`; streams are binary event-stream messages
 * (`:event-type`, `:message-type`, exceptions with `:exception-type`). The model answers
 * from the request: a tool call when tools are declared and no result came back, the
 * tool's output once it did, Claude thinking with a signature when asked for.
 */

export interface AwsIdentity {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockCall {
  path: string;
  modelId: string;
  stream: boolean;
  headers: IncomingMessage['headers'];
  body: any;
  /** The region the request was signed for. */
  region: string;
}

/** What the fake does with the next calls (taken in order), instead of answering. */
export type Scripted =
  | { status: number; type: string; message: string; rawBody?: string }
  /** A stream that sends `before` text deltas, then the exception. */
  | { exception: string; message: string; before?: number };

export const BEDROCK_USAGE = {
  inputTokens: 21,
  outputTokens: 9,
  totalTokens: 36,
  cacheReadInputTokens: 4,
  cacheWriteInputTokens: 2,
};
export const BEDROCK_SIGNATURE = 'QmVkcm9ja0NsYXVkZVNpZ25hdHVyZQ==';
const THOUGHT = 'Considering the request.';

const TOP_LEVEL = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
]);

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer =>
  createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding, as SigV4 wants for each path segment and query part. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * Why the request's SigV4 signature is wrong (undefined when it is right), and the
 * canonical request the fake computed (AWS quotes it in its error message).
 */
export function verifySigV4(
  method: string,
  rawPath: string,
  headers: IncomingMessage['headers'],
  body: Buffer,
  identity: AwsIdentity,
  service: string,
): { problem?: string; canonical: string; region: string } {
  const auth = String(headers.authorization ?? '');
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) {
    return { problem: 'MissingAuthenticationToken', canonical: '', region: '' };
  }
  const [, keyId, day, region, signedService, signedList, signature] = m;
  const amzDate = String(headers['x-amz-date'] ?? '');
  const [path, query = ''] = rawPath.split('?');
  const canonicalPath = path
    .split('/')
    .map((segment) => uriEncode(segment))
    .join('/');
  const canonicalQuery = query
    .split('&')
    .filter((p) => p !== '')
    .map((p) =>
      p
        .split('=')
        .map((s) => uriEncode(decodeURIComponent(s)))
        .join('='),
    )
    .sort()
    .join('&');
  const names = signedList.split(';');
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(headers[n] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('');
  const canonical = [
    method,
    canonicalPath,
    canonicalQuery,
    canonicalHeaders,
    signedList,
    sha256(body),
  ].join('\n');
  const scope = `${day}/${region}/${signedService}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(
    hmac(hmac(hmac(`AWS4${identity.secretAccessKey}`, day), region), signedService),
    'aws4_request',
  );
  const expected = createHmac('sha256', key).update(toSign).digest('hex');
  const skew = Math.abs(
    Date.parse(
      amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
    ) - Date.now(),
  );
  let problem: string | undefined;
  if (keyId !== identity.accessKeyId) {
    problem = 'UnrecognizedClient';
  } else if (signedService !== service || !amzDate.startsWith(day) || !(skew < 5 * 60_000)) {
    problem = 'InvalidSignature';
  } else if (!names.includes('host') || !names.includes('x-amz-date')) {
    problem = 'InvalidSignature';
  } else if (
    identity.sessionToken !== undefined &&
    headers['x-amz-security-token'] !== identity.sessionToken
  ) {
    problem = 'UnrecognizedClient';
  } else if (signature !== expected) {
    problem = 'InvalidSignature';
  }
  return { problem, canonical, region };
}

type Block = Record<string, any>;

/** The content blocks and stop reason the fake model gives to a Converse body. */
export function converseAnswer(body: Record<string, any>): {
  content: Block[];
  stopReason: string;
} {
  const messages: { role: string; content: Block[] }[] = body.messages;
  const last = messages[messages.length - 1];
  const thinking = body.additionalModelRequestFields?.thinking?.type === 'enabled';
  const declared = body.toolConfig?.tools?.[0]?.toolSpec?.name;
  const result = last.content.find((b) => b.toolResult)?.toolResult;
  const content: Block[] = thinking
    ? [{ reasoningContent: { reasoningText: { text: THOUGHT, signature: BEDROCK_SIGNATURE } } }]
    : [];
  if (result) {
    content.push({ text: `The tool said: ${result.content?.[0]?.text ?? ''}` });
    return { content, stopReason: 'end_turn' };
  }
  if (declared) {
    content.push({
      toolUse: { toolUseId: 'tooluse_bdrk_1', name: declared, input: { city: 'Paris' } },
    });
    return { content, stopReason: 'tool_use' };
  }
  content.push({ text: 'Hello from Bedrock.' });
  return { content, stopReason: 'end_turn' };
}

/** Why a Converse body is invalid, as Bedrock's ValidationException would say. */
function invalid(body: any): string | undefined {
  const unknown = Object.keys(body ?? {}).filter((k) => !TOP_LEVEL.has(k));
  if (unknown.length > 0) {
    return `Malformed input request: extraneous key [${unknown[0]}] is not permitted`;
  }
  if (!Array.isArray(body?.messages) || body.messages.length === 0) {
    return 'A conversation must start with a user message.';
  }
  let expected = 'user';
  for (const m of body.messages) {
    if (m.role !== expected) {
      return 'A conversation must alternate between user and assistant roles.';
    }
    if (!Array.isArray(m.content) || m.content.length === 0) {
      return 'The content field in the Message object is empty.';
    }
    for (const b of m.content) {
      if (b.text === '' || b.toolResult?.content?.length === 0) {
        return 'The text field in the ContentBlock object is blank.';
      }
      if ((b.toolUse || b.toolResult) && body.toolConfig === undefined) {
        return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
      }
      const r = b.reasoningContent?.reasoningText;
      if (r !== undefined && r.signature !== BEDROCK_SIGNATURE) {
        return 'The reasoning block signature is invalid.';
      }
    }
    expected = expected === 'user' ? 'assistant' : 'user';
  }
  if (typeof body.inferenceConfig?.maxTokens !== 'number') {
    return 'The model requires inferenceConfig.maxTokens.';
  }
  return undefined;
}

/** The ConverseStream events of an answer, in Bedrock's order. */
export function converseEvents(
  content: Block[],
  stopReason: string,
): { type: string; body: Record<string, unknown> }[] {
  const out: { type: string; body: Record<string, unknown> }[] = [
    { type: 'messageStart', body: { role: 'assistant' } },
  ];
  content.forEach((block, i) => {
    const at = { contentBlockIndex: i };
    if (block.toolUse) {
      const { toolUseId, name, input } = block.toolUse;
      const json = JSON.stringify(input);
      out.push(
        { type: 'contentBlockStart', body: { ...at, start: { toolUse: { toolUseId, name } } } },
        {
          type: 'contentBlockDelta',
          body: { ...at, delta: { toolUse: { input: json.slice(0, 5) } } },
        },
        {
          type: 'contentBlockDelta',
          body: { ...at, delta: { toolUse: { input: json.slice(5) } } },
        },
      );
    } else if (block.reasoningContent) {
      const { text, signature } = block.reasoningContent.reasoningText;
      out.push(
        { type: 'contentBlockDelta', body: { ...at, delta: { reasoningContent: { text } } } },
        { type: 'contentBlockDelta', body: { ...at, delta: { reasoningContent: { signature } } } },
      );
    } else {
      const text: string = block.text;
      const half = Math.ceil(text.length / 2);
      out.push(
        { type: 'contentBlockDelta', body: { ...at, delta: { text: text.slice(0, half) } } },
        { type: 'contentBlockDelta', body: { ...at, delta: { text: text.slice(half) } } },
      );
    }
    out.push({ type: 'contentBlockStop', body: at });
  });
  out.push(
    { type: 'messageStop', body: { stopReason } },
    { type: 'metadata', body: { usage: BEDROCK_USAGE, metrics: { latencyMs: 120 } } },
  );
  return out;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function eventMessage(type: string, body: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    // Bedrock pads every event with a `p` field of varying length.
    body: fromUtf8(JSON.stringify({ ...body, p: 'abcdefgh'.slice(0, 1 + (type.length % 8)) })),
  });
}

function exceptionMessage(type: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: type },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** The HTTP status of each modelled exception, as the API reference lists them. */
export const EXCEPTION_STATUS: Record<string, number> = {
  ValidationException: 400,
  AccessDeniedException: 403,
  ResourceNotFoundException: 404,
  ModelTimeoutException: 408,
  ModelErrorException: 424,
  ThrottlingException: 429,
  ModelNotReadyException: 429,
  ServiceQuotaExceededException: 400,
  InternalServerException: 500,
  ServiceUnavailableException: 503,
};

export class FakeBedrock {
  readonly calls: BedrockCall[] = [];
  /** Scripted failures for the next calls, taken in order. */
  readonly script: Scripted[] = [];
  private server!: Server;
  url = '';

  constructor(
    readonly identity: AwsIdentity,
    readonly region: string,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  reset(): void {
    this.calls.length = 0;
    this.script.length = 0;
  }

  last(): BedrockCall {
    const call = this.calls[this.calls.length - 1];
    if (!call) {
      throw new Error('the fake Bedrock received no call');
    }
    return call;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private error(
    res: ServerResponse,
    type: string,
    message: string,
    status?: number,
    rawBody?: string,
  ): void {
    res.writeHead(status ?? EXCEPTION_STATUS[type] ?? 400, {
      'content-type': 'application/json',
      'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      'x-amzn-requestid': 'c5b8a5d0-0000-4000-8000-000000000000',
    });
    res.end(rawBody ?? JSON.stringify({ message }));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) {
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    const rawPath = req.url ?? '';
    const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(rawPath.split('?')[0]);
    const check = verifySigV4(
      req.method ?? '',
      rawPath,
      req.headers,
      raw,
      this.identity,
      'bedrock',
    );
    if (check.problem === 'InvalidSignature') {
      // AWS quotes the canonical request, security token included: a client must not echo it.
      this.error(
        res,
        'InvalidSignatureException',
        `The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. The Canonical String for this request should have been\n'${check.canonical}'`,
        403,
      );
      return;
    }
    if (check.problem !== undefined) {
      this.error(
        res,
        `${check.problem}Exception`,
        'The security token included in the request is invalid.',
        403,
      );
      return;
    }
    if (check.region !== this.region) {
      this.error(
        res,
        'InvalidSignatureException',
        `Credential should be scoped to a valid region, not '${check.region}'.`,
        403,
      );
      return;
    }
    if (req.method !== 'POST' || !route) {
      this.error(res, 'UnknownOperationException', `No operation at ${rawPath}`, 404);
      return;
    }
    let body: any;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      this.error(res, 'SerializationException', 'Request body is not JSON.');
      return;
    }
    const stream = route[2] === 'converse-stream';
    this.calls.push({
      path: rawPath,
      modelId: decodeURIComponent(route[1]),
      stream,
      headers: req.headers,
      body,
      region: check.region,
    });
    const scripted = this.script.shift();
    if (scripted && 'status' in scripted) {
      this.error(res, scripted.type, scripted.message, scripted.status, scripted.rawBody);
      return;
    }
    const problem = invalid(body);
    if (problem !== undefined) {
      this.error(res, 'ValidationException', problem);
      return;
    }
    const { content, stopReason } = converseAnswer(body);
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          output: { message: { role: 'assistant', content } },
          stopReason,
          usage: BEDROCK_USAGE,
          metrics: { latencyMs: 120 },
        }),
      );
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    let events = converseEvents(content, stopReason);
    if (scripted && 'exception' in scripted) {
      events = events.slice(0, scripted.before ?? 0);
    }
    for (const event of events) {
      res.write(eventMessage(event.type, event.body));
    }
    if (scripted && 'exception' in scripted) {
      res.write(exceptionMessage(scripted.exception, scripted.message));
    }
    res.end();
  }
}
