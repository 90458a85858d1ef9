import { InvalidRequestError } from '../../common/errors/gateway-errors';
import { parseForced } from '../../config/protections.config';
import {
  defaultInjectionSettings,
  parseInjectionSettings,
} from './prompt-injection/injection-settings';
import {
  PROMPT_INJECTION_TOOL,
  type ProtectionTool,
  withoutProtectionTools,
} from './protection-facts';

const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: {} } };

describe('parseInjectionSettings', () => {
  const defaults = defaultInjectionSettings(0.5);
  const parse = (schema: unknown) =>
    parseInjectionSettings(schema, 'tools[0].parameters', defaults);
  const props = (properties: unknown) => ({ type: 'object', properties });

  it('uses the defaults without a schema or properties', () => {
    expect(parse(undefined)).toEqual(defaults);
    expect(parse({ type: 'object' })).toEqual(defaults);
  });

  it('reads default and const values', () => {
    expect(
      parse(
        props({
          action: { type: 'string', const: 'flag' },
          threshold: { type: 'number', default: 0.8 },
          scan: { type: 'string', default: 'tool_results, documents' },
        }),
      ),
    ).toEqual({
      ...defaults,
      action: 'flag',
      threshold: 0.8,
      sources: ['tool_result', 'document'],
    });
    expect(parse(props({ scan: { default: ['user'] } })).sources).toEqual(['user']);
  });

  it('reads the detector backend, fail mode and timeout, naming the detector setting', () => {
    expect(
      parse(
        props({
          detector: { const: 'http' },
          fail_mode: { const: 'closed' },
          timeout_ms: { default: 750 },
        }),
      ),
    ).toEqual({
      ...defaults,
      detector: 'http',
      detectorParam: 'tools[0].parameters.properties.detector',
      failMode: 'closed',
      timeoutMs: 750,
    });
  });

  it.each([
    ['an unknown setting', { mode: { default: 'x' } }, 'tools[0].parameters.properties.mode'],
    ['a bad action', { action: { default: 'drop' } }, 'tools[0].parameters.properties.action'],
    [
      'a threshold over 1',
      { threshold: { default: 2 } },
      'tools[0].parameters.properties.threshold',
    ],
    [
      'a string threshold',
      { threshold: { default: '0.3' } },
      'tools[0].parameters.properties.threshold',
    ],
    [
      'an unknown scan part',
      { scan: { default: ['user', 'images'] } },
      'tools[0].parameters.properties.scan',
    ],
    ['an empty scan', { scan: { default: [] } }, 'tools[0].parameters.properties.scan'],
    [
      'a bad fail mode',
      { fail_mode: { default: 'ajar' } },
      'tools[0].parameters.properties.fail_mode',
    ],
    [
      'a fractional timeout',
      { timeout_ms: { default: 99.5 } },
      'tools[0].parameters.properties.timeout_ms',
    ],
    ['an empty detector', { detector: { default: '' } }, 'tools[0].parameters.properties.detector'],
  ])('rejects %s with a 400 naming it', (_what, properties, param) => {
    let err: unknown;
    try {
      parse(props(properties));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidRequestError);
    expect(err).toMatchObject({ status: 400, param, message: expect.stringContaining(param) });
  });
});

describe('withoutProtectionTools', () => {
  const found = (index: number): ProtectionTool => ({
    name: PROMPT_INJECTION_TOOL,
    index,
    schemaParam: `tools[${index}].function.parameters`,
    schema: undefined,
  });

  it('keeps the other tools and tool_choice', () => {
    const body = {
      tools: [WEATHER, { type: 'function', function: { name: PROMPT_INJECTION_TOOL } }],
      tool_choice: 'required',
    };
    expect(withoutProtectionTools(body, [found(1)])).toEqual({
      tools: [WEATHER],
      tool_choice: 'required',
    });
    expect(body.tools).toHaveLength(2); // the client's body stays as it came
  });

  it('removes tools, tool_choice and parallel_tool_calls when no tool remains', () => {
    const body: Record<string, unknown> = {
      model: 'm',
      tools: [{ type: 'function', function: { name: PROMPT_INJECTION_TOOL } }],
      tool_choice: 'auto',
      parallel_tool_calls: false,
    };
    expect(withoutProtectionTools(body, [found(0)])).toEqual({ model: 'm' });
    expect(body.tool_choice).toBe('auto');
  });

  it('changes nothing when there is no protection tool', () => {
    const body = { tools: [WEATHER] };
    expect(withoutProtectionTools(body, [])).toBeUndefined();
    expect(body).toEqual({ tools: [WEATHER] });
  });
});

describe('parseForced', () => {
  it('reads the comma list', () => {
    expect(parseForced(undefined)).toEqual([]);
    expect(parseForced(' prompt_injection_protection ')).toEqual([PROMPT_INJECTION_TOOL]);
  });
});
