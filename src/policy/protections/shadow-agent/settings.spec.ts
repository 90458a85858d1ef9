import { GatewayError } from '../../../common/errors/gateway-errors';
import {
  MAX_POLICY_CHARS,
  type ShadowSettings,
  defaultShadowSettings,
  parseShadowSettings,
} from './settings';

const SCHEMA_PARAM = 'tools[1].function.parameters';
const DESCRIPTION_PARAM = 'tools[1].function.description';
const DEFAULTS = defaultShadowSettings('judge-default', 5000);

function schemaWith(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', properties };
}

function parse(schema: unknown, description?: unknown): ShadowSettings {
  return parseShadowSettings(schema, SCHEMA_PARAM, description, DESCRIPTION_PARAM, DEFAULTS);
}

function rejection(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('expected a 400');
}

describe('parseShadowSettings', () => {
  it('keeps the operator defaults when the tool sets nothing', () => {
    expect(parse(undefined)).toEqual({
      model: 'judge-default',
      action: 'block',
      scope: 'answer',
      onError: 'block',
      timeoutMs: 5000,
    });
    expect(parse({ type: 'object', properties: {} })).toEqual(DEFAULTS);
  });

  it('has no model when neither the operator nor the request names one', () => {
    expect(defaultShadowSettings(undefined, 5000).model).toBeUndefined();
  });

  it('reads every setting from const or default', () => {
    const settings = parse(
      schemaWith({
        model: { type: 'string', const: 'judge-mini' },
        action: { type: 'string', default: 'flag' },
        scope: { const: 'tool_calls' },
        on_error: { const: 'allow' },
        timeout_ms: { type: 'integer', default: 2500 },
      }),
    );
    expect(settings).toEqual({
      model: 'judge-mini',
      modelParam: `${SCHEMA_PARAM}.properties.model`,
      action: 'flag',
      scope: 'tool_calls',
      onError: 'allow',
      timeoutMs: 2500,
    });
  });

  it('prefers const over default', () => {
    expect(parse(schemaWith({ action: { const: 'flag', default: 'block' } })).action).toBe('flag');
  });

  it('takes the trimmed description as the policy', () => {
    expect(parse(undefined, '  Never promise refunds.\n').policy).toBe('Never promise refunds.');
    expect(parse(undefined, '   ').policy).toBeUndefined();
  });

  it.each([
    ['model', 42],
    ['model', ''],
    ['model', '   '],
    ['action', 'deny'],
    ['scope', 'everything'],
    ['on_error', 'ignore'],
    ['timeout_ms', 99],
    ['timeout_ms', 120_001],
    ['timeout_ms', 1500.5],
    ['timeout_ms', '2000'],
  ])('rejects %s = %j with a 400 naming it', (key, value) => {
    const err = rejection(() => parse(schemaWith({ [key]: { const: value } })));
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_protection_settings',
      param: `${SCHEMA_PARAM}.properties.${key}`,
    });
  });

  it.each([100, 120_000])('accepts timeout_ms %i at the bounds', (ms) => {
    expect(parse(schemaWith({ timeout_ms: { const: ms } })).timeoutMs).toBe(ms);
  });

  it('rejects an unknown setting with a 400 naming it', () => {
    const err = rejection(() => parse(schemaWith({ threshold: { const: 0.5 } })));
    expect(err).toMatchObject({
      status: 400,
      param: `${SCHEMA_PARAM}.properties.threshold`,
      code: 'invalid_protection_settings',
    });
    expect(err.message).toContain('shadow_agent_validation');
  });

  it.each([[42], [{ text: 'policy' }]])(
    'rejects a description that is not a string (%j) with a 400 naming it',
    (description) => {
      expect(rejection(() => parse(undefined, description))).toMatchObject({
        status: 400,
        param: DESCRIPTION_PARAM,
        code: 'invalid_protection_settings',
      });
    },
  );

  it('rejects a policy longer than the limit, and accepts one at it', () => {
    expect(parse(undefined, 'x'.repeat(MAX_POLICY_CHARS)).policy).toHaveLength(MAX_POLICY_CHARS);
    const err = rejection(() => parse(undefined, 'x'.repeat(MAX_POLICY_CHARS + 1)));
    expect(err).toMatchObject({ status: 400, param: DESCRIPTION_PARAM });
  });

  it('does not change the defaults it was given', () => {
    parse(schemaWith({ action: { const: 'flag' } }), 'policy');
    expect(DEFAULTS).toEqual(defaultShadowSettings('judge-default', 5000));
  });
});
