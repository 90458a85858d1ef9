import { InvalidRequestError } from '../../../common/errors/gateway-errors';
import { defaultFilterSettings, parseFilterSettings } from './settings';

const PARAM = 'tools[0].parameters';
const schema = (properties: Record<string, unknown>): unknown => ({ type: 'object', properties });

describe('filter settings', () => {
  const defaults = defaultFilterSettings(8);

  it('defaults to block with the given overlap', () => {
    expect(defaults).toEqual({ action: 'block', minOverlap: 8 });
    expect(parseFilterSettings(undefined, PARAM, defaults)).toEqual(defaults);
    expect(parseFilterSettings({ type: 'object' }, PARAM, defaults)).toEqual(defaults);
  });

  it('reads action and min_overlap from const or default', () => {
    expect(
      parseFilterSettings(
        schema({ action: { const: 'redact' }, min_overlap: { default: 12 } }),
        PARAM,
        defaults,
      ),
    ).toEqual({ action: 'redact', minOverlap: 12 });
  });

  it.each([
    ['an unknown action', { action: { const: 'flag' } }, `${PARAM}.properties.action`],
    ['a fractional overlap', { min_overlap: { const: 4.5 } }, `${PARAM}.properties.min_overlap`],
    ['an overlap under 3', { min_overlap: { const: 2 } }, `${PARAM}.properties.min_overlap`],
    ['an overlap over 200', { min_overlap: { const: 201 } }, `${PARAM}.properties.min_overlap`],
    ['an unknown setting', { threshold: { const: 1 } }, `${PARAM}.properties.threshold`],
  ])('rejects %s with a 400 naming it', (_name, properties, param) => {
    let error: unknown;
    try {
      parseFilterSettings(schema(properties), PARAM, defaults);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toContain(param);
  });

  it('does not change the defaults it was given', () => {
    parseFilterSettings(schema({ action: { const: 'redact' } }), PARAM, defaults);
    expect(defaults.action).toBe('block');
  });
});
