/** The ResponseStore (database or memory), provided by the Responses module. */
export const RESPONSE_STORE = Symbol('RESPONSE_STORE');
