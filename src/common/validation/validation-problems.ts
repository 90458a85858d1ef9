import type { ValidationError } from 'class-validator';

/**
 * class-validator's errors as one `path: message` line per failed constraint, nested
 * properties spelled `models.gpt[0].pricing` under `prefix`; appended to `out`, returned.
 * The one reading of those errors for the boot-time files and the environment.
 */
export function validationProblems(
  errors: readonly ValidationError[],
  prefix = '',
  out: string[] = [],
): string[] {
  for (const e of errors) {
    const key = /^\d+$/.test(e.property) ? `${prefix}[${e.property}]` : `${prefix}.${e.property}`;
    const path = key.replace(/^\./, '');
    for (const message of Object.values(e.constraints ?? {})) {
      out.push(`${path}: ${message}`);
    }
    validationProblems(e.children ?? [], path, out);
  }
  return out;
}
