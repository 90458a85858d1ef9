export type { OpenApiDocument } from './openapi.document';

/**
 * Injection token of the document served at /openapi.json: a function that builds it on
 * its first call and then returns the same document.
 */
export const OPENAPI_DOCUMENT = Symbol('OPENAPI_DOCUMENT');
