/** The largest value of PostgreSQL's `bigint` (int8), the type of the tables' serial ids. */
const MAX_INT8 = 9_223_372_036_854_775_807n;

/**
 * Whether `text` is a row id as the database writes it: a positive int8 in canonical
 * decimal (no sign, no leading zero). Cursors check their ids with it, so that one the
 * database would refuse is the client's 400, not a failed query.
 */
export function isRowId(text: string): boolean {
  if (!/^[1-9]\d{0,18}$/.test(text)) {
    return false;
  }
  return BigInt(text) <= MAX_INT8;
}
