import { MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ENDPOINTS } from '../catalog/catalog.schema';
import { envelopeForPath } from '../common/errors/global-exception.filter';
import { KEY_ENDPOINTS, endpointOfPath } from '../common/key-policy';
import { WIRE_FORMATS } from './wire-formats';

/** A minimal valid generation body of each format, for its decoder. */
const MINIMAL: Record<string, unknown> = {
  chat_completions: { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
  responses: { model: 'm', input: 'hi' },
  messages: { model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
};

/**
 * What a format's descriptor says must be what the layers below it do with its path: they
 * cannot import the formats, so a new format that disagrees with them fails here.
 */
describe.each(WIRE_FORMATS.map((f) => [f.format.name, f] as const))('wire format %s', (_, f) => {
  const { format } = f;

  it('is served by its own module at its path, through its adapter', () => {
    const controllers = Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, f.module) as object[];
    expect(controllers.map((c) => Reflect.getMetadata(PATH_METADATA, c) as string)).toContain(
      format.path,
    );
    expect(format.adapter.format).toBe(format.name);
  });

  it('is a catalog endpoint and a key scope under its one name', () => {
    expect(ENDPOINTS).toContain(format.name);
    expect(KEY_ENDPOINTS).toContain(format.name);
    expect(endpointOfPath(`/${format.path}`)).toBe(format.name);
  });

  it('answers errors in its envelope, also where no controller matched', () => {
    expect(envelopeForPath(`/${format.path}`, undefined)).toBe(format.envelope);
  });

  it('decodes to requests that carry its parameter names and name', () => {
    const request = format.adapter.decode(format.adapter.validate(MINIMAL[format.name]));
    expect(request.paramNames).toBe(format.params);
    expect(request.source).toBe(format.name);
  });
});

it('registers each format once', () => {
  const names = WIRE_FORMATS.map((f) => f.format.name);
  expect(new Set(names).size).toBe(names.length);
});
