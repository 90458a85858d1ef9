import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Agent, request } from 'undici';
import type { AllConfig } from '../../../../config';
import type { InjectionDetectorsConfig } from '../../../../config/protections.config';
import { invalidSetting } from '../../protection-settings';
import {
  type BackendCall,
  type BackendPart,
  type BackendVerdict,
  DetectorBackendFailure,
  type InjectionDetectorBackend,
  RegisterInjectionDetector,
} from './detector-backend';
import { parseScores, requestBodies, ResponseShapeError } from './http-formats';

/** Characters two neighbouring chunks share, so an instruction cut in two is whole in one. */
export const CHUNK_OVERLAP = 200;
/** Inputs sent for one request at most; a long part keeps its head and tail chunks. */
export const MAX_HTTP_INPUTS = 128;
/** Inputs per HTTP call (TEI's default max_client_batch_size is 32). */
export const HTTP_BATCH = 32;
/** An answer larger than this is not a classifier's. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * Cuts `text` into chunks of at most `max` characters overlapping by CHUNK_OVERLAP; when
 * there are more than `budget`, the first and last ones are kept (an injection is most
 * often at a document's start or end, and the cost stays bounded).
 */
export function chunkText(text: string, max: number, budget: number): string[] {
  if (text.length <= max) {
    return [text];
  }
  const stride = Math.max(1, max - CHUNK_OVERLAP);
  const chunks: string[] = [];
  for (let at = 0; at < text.length; at += stride) {
    chunks.push(text.slice(at, at + max));
    if (at + max >= text.length) {
      break;
    }
  }
  if (chunks.length <= budget) {
    return chunks;
  }
  const head = Math.ceil(budget / 2);
  return [...chunks.slice(0, head), ...chunks.slice(chunks.length - (budget - head))];
}

/**
 * `detector: http`: a guard model the operator serves (PROMPT_INJECTION_HTTP_URL, format
 * PROMPT_INJECTION_HTTP_FORMAT: TEI, KServe v2 or plain JSON). Each part is sent as chunks
 * of at most PROMPT_INJECTION_HTTP_MAX_CHARS; its score is its most suspicious chunk's.
 * The URL comes from the operator only: a request can pick the backend, never the address.
 */
@RegisterInjectionDetector(true)
@Injectable()
export class HttpClassifierDetector implements InjectionDetectorBackend, OnModuleDestroy {
  readonly name = 'http';
  readonly remote = true;
  private readonly config: InjectionDetectorsConfig['http'];
  private readonly agent = new Agent({ keepAliveTimeout: 30_000, connections: 16 });

  constructor(config: ConfigService<AllConfig, true>) {
    this.config = config.get('protections', { infer: true }).promptInjectionDetectors.http;
  }

  async onModuleDestroy(): Promise<void> {
    // destroy, not close: close rejects once the agent is destroyed, and an application may be
    // closed twice (a test's early close, then its cleanup).
    await this.agent.destroy();
  }

  check(_settings: unknown, param: string): void {
    if (this.config.url === undefined) {
      throw invalidSetting(
        param,
        "the 'http' detector is not configured on this gateway (PROMPT_INJECTION_HTTP_URL).",
      );
    }
  }

  async score(parts: readonly BackendPart[], call: BackendCall): Promise<BackendVerdict[]> {
    const texts = parts.map((p) => p.text);
    const budget = Math.max(1, Math.floor(MAX_HTTP_INPUTS / Math.max(1, texts.length)));
    const owner: number[] = [];
    const inputs: string[] = [];
    texts.forEach((text, i) => {
      for (const chunk of chunkText(text, this.config.maxChars, budget)) {
        owner.push(i);
        inputs.push(chunk);
      }
    });
    const scores: number[] = [];
    const batches: string[][] = [];
    for (let at = 0; at < inputs.length; at += HTTP_BATCH) {
      batches.push(inputs.slice(at, at + HTTP_BATCH));
    }
    for (const batch of await Promise.all(batches.map((b) => this.classify(b, call)))) {
      scores.push(...batch);
    }
    const best = texts.map(() => 0);
    scores.forEach((s, k) => {
      best[owner[k]] = Math.max(best[owner[k]], s);
    });
    return best.map((score) => ({ score, signals: [] }));
  }

  private async classify(texts: string[], call: BackendCall): Promise<number[]> {
    const { format } = this.config;
    const bodies = requestBodies(format, texts, this.config);
    const answers = await Promise.all(bodies.map((body) => this.post(body, call)));
    try {
      return parseScores(format, answers, texts.length, this.config);
    } catch (e) {
      if (e instanceof ResponseShapeError) {
        throw new DetectorBackendFailure('bad_response', `http detector: ${e.message}`);
      }
      throw e;
    }
  }

  private async post(body: unknown, call: BackendCall): Promise<unknown> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.apiKey !== undefined) {
      headers.authorization = `Bearer ${this.config.apiKey}`;
    }
    let text: string;
    try {
      const res = await request(this.config.url as string, {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: call.signal,
        dispatcher: this.agent,
      });
      const length = Number(res.headers['content-length'] ?? 0);
      if (res.statusCode < 200 || res.statusCode >= 300 || length > MAX_ANSWER_BYTES) {
        await res.body.dump();
        throw new DetectorBackendFailure(
          'unavailable',
          `http detector answered HTTP ${res.statusCode}`,
        );
      }
      text = await res.body.text();
    } catch (e) {
      if (e instanceof DetectorBackendFailure) {
        throw e;
      }
      const reason: unknown = call.signal.reason;
      if (call.signal.aborted && reason instanceof DetectorBackendFailure) {
        throw reason;
      }
      // The error's name only: a message may echo the request.
      throw new DetectorBackendFailure(
        'unavailable',
        `http detector call failed: ${(e as Error).name}`,
        { cause: e },
      );
    }
    if (text.length > MAX_ANSWER_BYTES) {
      throw new DetectorBackendFailure('bad_response', 'http detector answer is too large');
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new DetectorBackendFailure('bad_response', 'http detector answer is not JSON');
    }
  }
}
