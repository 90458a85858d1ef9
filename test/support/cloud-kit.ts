import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { TEST_KEY, type TestGateway } from './gateway';

/**
 * Process environment a suite sets for its whole run (credential chains read it after boot,
 * when they first resolve) and gives back afterwards.
 */
export class SuiteEnv {
  private readonly saved = new Map<string, string | undefined>();

  /** Sets (or, for undefined, removes) each variable, remembering its first value. */
  set(values: Record<string, string | undefined>): void {
    for (const [k, v] of Object.entries(values)) {
      if (!this.saved.has(k)) {
        this.saved.set(k, process.env[k]);
      }
      if (v === undefined) {
        delete process.env[k];
      } else {
        process.env[k] = v;
      }
    }
  }

  /** Puts every variable back as it was. */
  restore(): void {
    for (const [k, v] of this.saved) {
      if (v === undefined) {
        delete process.env[k];
      } else {
        process.env[k] = v;
      }
    }
    this.saved.clear();
  }
}

/** The official clients on `gw`, each answer's body also pushed onto `answers` (for leak checks). */
export function recordingClients(
  gw: TestGateway,
  answers: string[],
): { openai: OpenAI; anthropic: Anthropic } {
  const fetchAndKeep: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    answers.push(await res.clone().text());
    return res;
  };
  return {
    openai: new OpenAI({
      baseURL: gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 0,
      fetch: fetchAndKeep,
    }),
    anthropic: new Anthropic({
      baseURL: gw.origin,
      apiKey: TEST_KEY,
      maxRetries: 0,
      fetch: fetchAndKeep,
    }),
  };
}
