import 'reflect-metadata';
import { validateSync } from 'class-validator';
import fc from 'fast-check';
import { ChatCompletionRequestDto } from '../../formats/chat-completions/chat-request.dto';
import {
  CountTokensRequestDto,
  MessagesRequestDto,
} from '../../formats/messages/messages-request.dto';
import { ResponsesRequestDto } from '../../formats/responses/responses-request.dto';
import { setOwn } from '../own';
import { compiledCheckOf } from './compiled-check';

/** class-validator's own verdict on the same shallow view validateTopLevel builds. */
function classValidatorPasses(Dto: new () => object, body: Record<string, unknown>): boolean {
  const view = new Dto() as Record<string, unknown>;
  for (const key of Object.keys(body)) {
    if (!(key in Dto.prototype)) {
      setOwn(view, key, body[key]);
    }
  }
  return validateSync(view, { forbidUnknownValues: false }).length === 0;
}

const DTOS: [string, new () => object][] = [
  ['chat', ChatCompletionRequestDto],
  ['messages', MessagesRequestDto],
  ['count_tokens', CountTokensRequestDto],
  ['responses', ResponsesRequestDto],
];

/** Values that sit on both sides of the DTOs' rules: types, bounds, enums, empties. */
const value = fc.oneof(
  fc.constantFrom(undefined, null, true, false, 0, 1, 2, 2.5, -1, 128, 129, 1e9, '', 'x', 'high'),
  fc.constantFrom('none', 'auto', 'low', 'medium', 'max', 'bogus', [], {}, ['a'], [1, 'a']),
  fc.double(),
  fc.integer(),
  fc.string(),
  fc.array(fc.oneof(fc.string(), fc.integer(), fc.constant(null)), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string(), { maxKeys: 2 }),
);

describe('compiledCheckOf', () => {
  it.each(DTOS)('compiles the %s DTO', (_name, Dto) => {
    expect(compiledCheckOf(Dto)).not.toBeNull();
  });

  it.each(DTOS)('agrees with class-validator on every %s body', (_name, Dto) => {
    const check = compiledCheckOf(Dto)!;
    const names = Object.keys(new Dto()).concat(
      // Declared-only fields are not own keys of an instance: take them from the metadata.
      ['model', 'messages', 'input', 'max_tokens', 'system', 'stream', 'temperature', 'top_p'],
      ['n', 'tools', 'tool_choice', 'reasoning_effort', 'metadata', 'user', 'stop', 'top_k'],
      ['max_output_tokens', 'instructions', 'store', 'reasoning', 'text', 'previous_response_id'],
      ['stop_sequences', 'thinking', 'max_completion_tokens', 'stream_options', 'extra'],
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), value, { maxKeys: 12 }), (body) => {
        expect(check(body)).toBe(classValidatorPasses(Dto, body));
      }),
      { numRuns: 3000 },
    );
  });

  it('passes a typical valid chat body and refuses a bad one', () => {
    const check = compiledCheckOf(ChatCompletionRequestDto)!;
    const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }], temperature: 0.2 };
    expect(check(body)).toBe(true);
    expect(check({ ...body, temperature: 3 })).toBe(false);
    expect(check({ ...body, n: 1.5 })).toBe(false);
    expect(check({ ...body, model: '' })).toBe(false);
    expect(check({ ...body, messages: [] })).toBe(false);
  });
});
