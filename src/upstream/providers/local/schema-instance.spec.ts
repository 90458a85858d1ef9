import { schemaInstance } from './schema-instance';

describe('schemaInstance', () => {
  it('fills every property of an object, strings with the text', () => {
    const schema = {
      type: 'object',
      properties: {
        city: { type: 'string' },
        temperature: { type: 'number', minimum: -50 },
        days: { type: 'integer', exclusiveMinimum: 0 },
        sunny: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string', maxLength: 3 } },
      },
      required: ['city', 'temperature', 'days', 'sunny', 'tags'],
      additionalProperties: false,
    };
    expect(schemaInstance(schema, 'Paris')).toEqual({
      city: 'Paris',
      temperature: -50,
      days: 1,
      sunny: true,
      tags: ['Par'],
    });
  });

  it('takes const, enum, default, the non-null branch of anyOf and nullable type lists', () => {
    const schema = {
      type: 'object',
      properties: {
        kind: { const: 'forecast' },
        unit: { enum: ['C', 'F'] },
        level: { type: 'integer', default: 3 },
        note: { anyOf: [{ type: 'null' }, { type: 'string', format: 'date' }] },
        count: { type: ['null', 'integer'] },
      },
    };
    expect(schemaInstance(schema, 'x')).toEqual({
      kind: 'forecast',
      unit: 'C',
      level: 3,
      note: '2025-01-01',
      count: 0,
    });
  });

  it('resolves local $refs and stops on recursive ones', () => {
    const schema = {
      $ref: '#/$defs/node',
      $defs: {
        node: {
          type: 'object',
          properties: { name: { type: 'string' }, child: { $ref: '#/$defs/node' } },
        },
      },
    };
    let value = schemaInstance(schema, 'n') as { name: string; child: unknown };
    let depth = 0;
    while (value.child !== null && typeof value.child === 'object') {
      expect(value.name).toBe('n');
      value = value.child as typeof value;
      depth++;
    }
    expect(depth).toBeGreaterThan(1);
    expect(depth).toBeLessThan(10);
  });

  it('stays small for a tiny schema that refers back to itself from many places', () => {
    const properties = Object.fromEntries(
      Array.from({ length: 64 }, (_, i) => [`p${i}`, { $ref: '#' }]),
    );
    const arrays = { type: 'array', minItems: 16, items: { $ref: '#' } };
    for (const schema of [{ type: 'object', properties }, arrays]) {
      const text = JSON.stringify(schemaInstance(schema, 'x'));
      expect(text.length).toBeLessThan(64 * 1024);
    }
  });

  it('keeps a property named __proto__ as data', () => {
    const value = schemaInstance(
      JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}'),
      'x',
    );
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe('{"__proto__":"x"}');
  });
});
