import { IsInt, IsObject, IsString, Min } from 'class-validator';
import { GatewayError } from '../errors/gateway-errors';
import { OptionalNotNull, validateTopLevel } from './top-level.validation';

class Dto {
  @IsString() model!: string;
  @IsInt() @Min(1) max_tokens!: number;
  @OptionalNotNull() @IsObject() thinking?: object;
  [extra: string]: unknown;
}

function rejection(body: string): GatewayError {
  try {
    validateTopLevel(Dto, JSON.parse(body));
  } catch (e) {
    return e as GatewayError;
  }
  throw new Error('expected a rejection');
}

describe('validateTopLevel', () => {
  it.each(['constructor', 'valueOf', 'toString', 'hasOwnProperty', '__proto__'])(
    'keeps validating when the body has a top-level %s key',
    (key) => {
      const e = rejection(`{"${key}": 1, "model": "m"}`);
      expect(e.param).toBe('max_tokens');
      expect(e.message).toBe("Missing required parameter: 'max_tokens'.");
    },
  );

  it('returns the client object itself, prototype-named keys included', () => {
    const body = JSON.parse('{"model":"m","max_tokens":5,"constructor":1,"__proto__":{"x":1}}');
    expect(validateTopLevel(Dto, body)).toBe(body);
    expect(Object.getPrototypeOf(body)).toBe(Object.prototype);
  });

  it('names the expected type, before rules about the value', () => {
    expect(rejection('{"model":5,"max_tokens":1}').message).toBe(
      "Invalid type for 'model': expected a string, but got an integer.",
    );
    expect(rejection('{"model":"m","max_tokens":"1"}').message).toBe(
      "Invalid type for 'max_tokens': expected an integer, but got a string.",
    );
    expect(rejection('{"model":"m","max_tokens":0}').message).toMatch(
      /^Invalid value for 'max_tokens': /,
    );
  });

  it('treats an explicit null as a value for OptionalNotNull fields, an absent one as absent', () => {
    const e = rejection('{"model":"m","max_tokens":1,"thinking":null}');
    expect(e.param).toBe('thinking');
    expect(e.message).toBe("Invalid type for 'thinking': expected an object, but got null.");
    expect(() => validateTopLevel(Dto, { model: 'm', max_tokens: 1 })).not.toThrow();
  });
});
