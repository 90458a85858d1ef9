import { emptyFacts } from './limit-facts';
import { PromptTokens, usageEstimate } from './prompt-tokens';
import { estimatePromptTokens } from './tokens/token-estimator';

function facts(text: string) {
  const f = emptyFacts('messages');
  f.texts.push(text);
  f.messageCount = 1;
  return f;
}

describe('PromptTokens', () => {
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(50);

  it('counts once, by the first family asked, as the estimator does', () => {
    const prompt = new PromptTokens(facts(text));
    const openai = estimatePromptTokens(facts(text), 'openai');
    expect(prompt.count('openai')).toBe(openai);
    expect(prompt.count('anthropic')).toBe(openai);
  });

  it('takes a count made elsewhere instead of counting', () => {
    const prompt = new PromptTokens(facts(text));
    prompt.counted(7);
    expect(prompt.count('openai')).toBe(7);
  });

  it('prices a cut request at the prompt and the output it asked for', () => {
    const estimate = usageEstimate(new PromptTokens(facts(text)), 'openai', 512);
    expect(estimate()).toEqual({
      inputTokens: estimatePromptTokens(facts(text), 'openai'),
      outputTokens: 512,
    });
  });
});
