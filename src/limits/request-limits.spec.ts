import type { CatalogModel } from '../catalog/catalog.types';
import { ContextLengthExceededError, InvalidRequestError } from '../common/errors/gateway-errors';
import { type LimitFacts, emptyFacts } from './limit-facts';
import { checkContextWindow, checkCounts, checkMaxOutput } from './request-limits';
import { thrown } from '../testing/thrown';

const MODEL = { id: 'small', contextWindow: 8192, maxOutputTokens: 2048 } as CatalogModel;
const BOUNDS = { maxMessages: 3, maxTools: 2, maxContentParts: 4 };

function facts(over: Partial<LimitFacts>): LimitFacts {
  return { ...emptyFacts('messages'), ...over };
}

describe('checkCounts', () => {
  it('accepts counts at the bounds', () => {
    expect(() =>
      checkCounts(facts({ messageCount: 3, toolCount: 2, contentPartCount: 4 }), BOUNDS),
    ).not.toThrow();
  });

  it('rejects too many messages, naming the array the format uses', () => {
    const err = thrown(() =>
      checkCounts({ ...facts({ messageCount: 4 }), messagesParam: 'input' }, BOUNDS),
    );
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param: 'input', code: 'array_above_max_length' });
    expect((err as Error).message).toBe(
      "Invalid 'input': array too long. Expected an array with maximum length 3, but got an array with length 4 instead.",
    );
  });

  it('rejects too many tools', () => {
    expect(thrown(() => checkCounts(facts({ toolCount: 3 }), BOUNDS))).toMatchObject({
      param: 'tools',
      code: 'array_above_max_length',
    });
  });

  it('rejects too many content parts', () => {
    const err = thrown(() => checkCounts(facts({ contentPartCount: 5 }), BOUNDS));
    expect(err).toMatchObject({ status: 400, param: 'messages', code: 'too_many_content_parts' });
    expect((err as Error).message).toContain('5');
  });
});

describe('checkMaxOutput', () => {
  it('returns the first cap set, in the order the format prefers', () => {
    const f = facts({
      maxOutput: [
        { param: 'max_completion_tokens', value: 100 },
        { param: 'max_tokens', value: 200 },
      ],
    });
    expect(checkMaxOutput(f, MODEL)).toBe(100);
    expect(checkMaxOutput(facts({}), MODEL)).toBeUndefined();
  });

  it('accepts exactly the model maximum', () => {
    expect(
      checkMaxOutput(facts({ maxOutput: [{ param: 'max_tokens', value: 2048 }] }), MODEL),
    ).toBe(2048);
  });

  it('rejects a cap above the model maximum, naming the parameter and both numbers', () => {
    const err = thrown(() =>
      checkMaxOutput(facts({ maxOutput: [{ param: 'max_output_tokens', value: 4096 }] }), MODEL),
    );
    expect(err).toMatchObject({ status: 400, param: 'max_output_tokens', code: 'invalid_value' });
    expect((err as Error).message).toBe(
      "'max_output_tokens' is too large: 4096. The model 'small' supports at most 2048 output tokens.",
    );
  });

  it.each([[0], [-1], [1.5], ['100'], [true], [{}]])(
    'rejects %p as not a positive integer',
    (value) => {
      const err = thrown(() =>
        checkMaxOutput(facts({ maxOutput: [{ param: 'max_tokens', value }] }), MODEL),
      );
      expect(err).toMatchObject({ status: 400, param: 'max_tokens', code: 'invalid_value' });
      expect((err as Error).message).toContain('positive integer');
    },
  );

  it('checks every cap that is set, not only the first', () => {
    const f = facts({
      maxOutput: [
        { param: 'max_completion_tokens', value: 10 },
        { param: 'max_tokens', value: 9999 },
      ],
    });
    expect(thrown(() => checkMaxOutput(f, MODEL))).toMatchObject({ param: 'max_tokens' });
  });
});

describe('checkContextWindow', () => {
  const withCap = facts({ maxOutput: [{ param: 'max_tokens', value: 2000 }] });

  it('lets a request that fits through', () => {
    expect(() => checkContextWindow(MODEL, 6192, 2000, 0, withCap)).not.toThrow();
  });

  it('rejects prompt plus output above the window with context_length_exceeded and the numbers', () => {
    const err = thrown(() => checkContextWindow(MODEL, 6193, 2000, 0, withCap));
    expect(err).toBeInstanceOf(ContextLengthExceededError);
    expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded', param: 'messages' });
    expect((err as Error).message).toBe(
      "This model's maximum context length is 8192 tokens. However, you requested about 8193 tokens (about 6193 in the prompt, 2000 in the output (max_tokens)). Please reduce the length of the messages or max_tokens.",
    );
  });

  it('trusts an approximate estimate only down to its tolerance', () => {
    // 9000 x (1 - 0.15) = 7650 <= 8192: could fit with the real tokenizer, so let it go.
    expect(() => checkContextWindow(MODEL, 9000, 0, 0.15, facts({}))).not.toThrow();
    expect(() => checkContextWindow(MODEL, 9700, 0, 0.15, facts({}))).toThrow(
      ContextLengthExceededError,
    );
  });

  it('words the message without an output part when no cap was sent', () => {
    expect((thrown(() => checkContextWindow(MODEL, 9000, 0, 0, facts({}))) as Error).message).toBe(
      "This model's maximum context length is 8192 tokens. However, you requested about 9000 tokens (about 9000 in the prompt). Please reduce the length of the messages.",
    );
  });
});
