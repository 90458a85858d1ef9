import { ValidationTypes, getMetadataStorage } from 'class-validator';
import type { ValidationArguments, ValidatorConstraintInterface } from 'class-validator';
import { own } from '../own';

/** True when a body passes every decorator of the DTO; false sends it to class-validator. */
export type CompiledCheck = (body: Record<string, unknown>) => boolean;

interface Rule {
  each: boolean;
  validate: ValidatorConstraintInterface['validate'];
  /** Reused by every call (validation is synchronous): no allocation per request. */
  args: ValidationArguments;
}

interface PropertyCheck {
  property: string;
  conditions: ((object: object, value: unknown) => boolean)[];
  /** IsDefined rules first, as class-validator runs them, then the others. */
  defined: Rule[];
  rules: Rule[];
}

const compiled = new WeakMap<object, CompiledCheck | null>();

/**
 * The success path of class-validator, decided once per DTO class instead of per request:
 * `validateSync` looks up and groups the class's metadata and allocates a ValidationError
 * per property on every call, which showed in the gateway's CPU profile. The compiled check
 * runs the same constraint objects (so every rule means exactly what its decorator says) in
 * the same order: conditions (IsOptional, ValidateIf), then IsDefined, then the rest. It
 * only answers "valid"; any failure goes back to class-validator, which builds the error
 * message, so messages cannot drift. A DTO using a kind of metadata this does not know
 * (nested, async, whitelist, groups) is not compiled, and always takes class-validator.
 */
export function compiledCheckOf(Dto: new () => object): CompiledCheck | null {
  let check = compiled.get(Dto);
  if (check === undefined) {
    check = compile(Dto);
    compiled.set(Dto, check);
  }
  return check;
}

function compile(Dto: new () => object): CompiledCheck | null {
  const storage = getMetadataStorage();
  const byProperty = new Map<string, PropertyCheck>();
  for (const m of storage.getTargetValidationMetadatas(Dto, '', true, false)) {
    // A property named like an Object.prototype member would read the prototype's value.
    if (m.propertyName in Object.prototype || (m.groups?.length ?? 0) > 0 || m.always) {
      return null;
    }
    let p = byProperty.get(m.propertyName);
    if (p === undefined) {
      p = { property: m.propertyName, conditions: [], defined: [], rules: [] };
      byProperty.set(m.propertyName, p);
    }
    if (m.type === ValidationTypes.CONDITIONAL_VALIDATION) {
      p.conditions.push(m.constraints[0] as PropertyCheck['conditions'][number]);
      continue;
    }
    const isDefined = m.type === ValidationTypes.IS_DEFINED;
    if (!isDefined && m.type !== ValidationTypes.CUSTOM_VALIDATION) {
      return null;
    }
    const constraint = storage.getTargetValidatorConstraints(m.constraintCls);
    if (constraint.length !== 1 || constraint[0].async) {
      return null;
    }
    const instance = constraint[0].instance;
    (isDefined ? p.defined : p.rules).push({
      each: m.each,
      validate: instance.validate.bind(instance),
      args: {
        targetName: Dto.name,
        property: m.propertyName,
        object: {},
        value: undefined,
        constraints: m.constraints ?? [],
      },
    });
  }
  const properties = [...byProperty.values()].map((p) => ({
    property: p.property,
    conditions: p.conditions,
    rules: [...p.defined, ...p.rules],
  }));
  return (body) => {
    for (const p of properties) {
      const value = own(body, p.property);
      if (!p.conditions.every((condition) => condition(body, value))) {
        continue;
      }
      for (const rule of p.rules) {
        if (!passes(rule, body, value)) {
          return false;
        }
      }
    }
    return true;
  };
}

const NOTHING = {};

function passes(rule: Rule, body: object, value: unknown): boolean {
  const args = rule.args;
  args.object = body;
  let ok = true;
  if (rule.each && Array.isArray(value)) {
    for (const item of value as unknown[]) {
      args.value = item;
      if (rule.validate(item, args) !== true) {
        ok = false;
        break;
      }
    }
  } else {
    args.value = value;
    ok = rule.validate(value, args) === true;
  }
  // The shared arguments must not keep a client's body alive after its request.
  args.object = NOTHING;
  args.value = undefined;
  return ok;
}
