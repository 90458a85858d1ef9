export type { OpenApiDocument } from './openapi.document';

/** Injection token of the document served at /openapi.json (built once at boot). */
export const OPENAPI_DOCUMENT = Symbol('OPENAPI_DOCUMENT');
