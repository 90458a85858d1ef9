/** The Messages API version Vertex AI's Claude models take, in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/**
 * An Anthropic Messages body as Vertex's `rawPredict` takes it: the model is in the URL,
 * so no `model` field, and `anthropic_version` in the body instead of a header. A copy:
 * the caller's body is left as it was.
 */
export function vertexAnthropicBody(body: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, ...rest } = body;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

/**
 * The client's Messages bytes (already validated as a Messages body) rewritten for
 * Vertex: one parse and one serialisation; every other field is kept as sent.
 */
export function toVertexMessagesBody(raw: string | Buffer): string {
  const body = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8')) as Record<
    string,
    unknown
  >;
  return JSON.stringify(vertexAnthropicBody(body));
}

/**
 * A model id as a path segment: escaped, but for the `@` of Vertex's versioned ids
 * (`claude-sonnet-4-5@20250929`), which a path segment may hold and Google's own clients
 * send as is.
 */
export function modelSegment(id: string): string {
  return encodeURIComponent(id).replace(/%40/g, '@');
}
