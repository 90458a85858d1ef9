import type { CatalogModel } from '../catalog/catalog.types';
import { testModel } from '../testing/test-model';
import { costPico, tokenPrices } from '../catalog/cost';
import {
  reachableModels,
  reservedPromptTokens,
  worstCaseCost,
  worstCaseOfModel,
} from './worst-case';

const gpt = testModel('chat_completions', {
  id: 'gpt',
  family: 'openai',
  maxOutputTokens: 16384,
  pricing: { input: 1.25, output: 10, cachedInput: 0.125 },
  fallbacks: ['claude', 'missing', 'scoped-out'],
});
const claude = testModel('messages', {
  id: 'claude',
  family: 'anthropic',
  maxOutputTokens: 32000,
  pricing: { input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
});
const cheap = testModel('chat_completions', {
  id: 'cheap',
  maxOutputTokens: 1000,
  pricing: { input: 0.1, output: 0.2 },
});
const scopedOut = testModel('chat_completions', {
  id: 'scoped-out',
  pricing: { input: 99, output: 99 },
});
const free = testModel('chat_completions', { id: 'free', pricing: { input: 0, output: 0 } });
const catalog = new Map<string, CatalogModel>(
  [gpt, claude, cheap, scopedOut, free].map((m) => [m.id, m]),
);
const find = (id: string): CatalogModel | undefined => catalog.get(id);

describe('worst-case cost of a request', () => {
  it('prices the prompt at the input price and the requested output cap at the output price', () => {
    // 100 x 1.25e6 + 500 x 10e6 pico-USD: $0.000125 + $0.005.
    expect(worstCaseOfModel(gpt, 100, 500)).toBe(5_125_000_000n);
  });

  it("takes the model's maximum output when the request sets no cap", () => {
    expect(worstCaseOfModel(gpt, 0, undefined)).toBe(16384n * 10_000_000n);
  });

  it('prices every prompt token at the dearest input price: a cache write beats fresh input', () => {
    expect(worstCaseOfModel(claude, 1000, 2000)).toBe(1000n * 3_750_000n + 2000n * 15_000_000n);
  });

  it('is never below the real cost of any usage within its prompt count and output cap', () => {
    const prices = tokenPrices(claude.pricing);
    const worst = worstCaseOfModel(claude, 2000, 3000);
    for (const usage of [
      { inputTokens: 2000, outputTokens: 3000 },
      { inputTokens: 2000, outputTokens: 3000, cachedInputTokens: 1500 },
      { inputTokens: 2000, outputTokens: 3000, cacheWriteInputTokens: 2000 },
      { inputTokens: 2000, outputTokens: 100, reasoningTokens: 3000 },
    ]) {
      expect(costPico(usage, prices)).toBeLessThanOrEqual(worst);
    }
  });

  it('adds the thinking floor a Messages model with reasoning may add to a small output cap', () => {
    const thinking = { ...claude, capabilities: { ...claude.capabilities, reasoning: true } };
    expect(worstCaseOfModel(thinking, 0, 100)).toBe((100n + 1024n) * 15_000_000n);
    expect(worstCaseOfModel(thinking, 0, 2000)).toBe(2000n * 15_000_000n);
    const plain = { ...claude, capabilities: { ...claude.capabilities, reasoning: false } };
    expect(worstCaseOfModel(plain, 0, 100)).toBe(100n * 15_000_000n);
  });

  it('is zero for an unpriced model and for no model at all', () => {
    expect(worstCaseOfModel(free, 1000, 1000)).toBe(0n);
    expect(worstCaseCost([], 1000, () => 1000)).toBe(0n);
  });

  it('takes the dearest of the models a request may reach, each with its own tokenizer count', () => {
    const asked: string[] = [];
    const worst = worstCaseCost([cheap, gpt, claude], 2000, (m) => {
      asked.push(m.id);
      return m.family === 'anthropic' ? 60 : 50;
    });
    expect(worst).toBe(worstCaseOfModel(claude, 60, 2000));
    expect(asked).toEqual(['cheap', 'gpt', 'claude']);
  });

  it('raises the prompt estimate by the family tolerance', () => {
    expect(reservedPromptTokens(100, 'openai')).toBe(110);
    expect(reservedPromptTokens(100, 'anthropic')).toBe(115);
    expect(reservedPromptTokens(100, 'llama')).toBe(125);
    expect(reservedPromptTokens(0, 'openai')).toBe(0);
  });
});

describe('models a request may reach', () => {
  const allowed = (m: CatalogModel): boolean => m.id !== 'scoped-out';

  it("lists the model, its catalog fallbacks and the client's own, once each, skipping unknown and forbidden ones", () => {
    const reach = reachableModels(gpt, find, allowed, [' cheap', 'claude', 42, 'gpt', 'nope']);
    expect(reach.map((m) => m.id)).toEqual(['gpt', 'claude', 'cheap']);
  });

  it('is the model alone without fallbacks', () => {
    expect(reachableModels(cheap, find, allowed, [])).toEqual([cheap]);
  });
});
