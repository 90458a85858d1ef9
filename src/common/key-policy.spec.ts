import { envelopeForPath } from './errors/global-exception.filter';
import {
  endpointOfPath,
  keyEndpointOf,
  keyMayUseModel,
  ModelScope,
  routedPath,
} from './key-policy';

describe('endpointOfPath', () => {
  it('classifies a path as the router matches it: any letter case, a trailing slash', () => {
    for (const path of ['/v1/chat/completions', '/V1/CHAT/COMPLETIONS', '/v1/chat/completions/']) {
      expect(endpointOfPath(path)).toBe('chat_completions');
    }
    expect(endpointOfPath('/V1/Messages//')).toBe('messages');
    expect(endpointOfPath('/v1/Responses/resp_1')).toBe('responses');
    expect(endpointOfPath('/v1/models')).toBeUndefined();
  });

  it('reads the older scope spelling chat.completions as chat_completions', () => {
    expect(keyEndpointOf('chat.completions')).toBe('chat_completions');
    expect(keyEndpointOf('chat_completions')).toBe('chat_completions');
    expect(keyEndpointOf('messages')).toBe('messages');
    expect(keyEndpointOf('toString')).toBeUndefined();
    expect(keyEndpointOf('embeddings')).toBeUndefined();
  });

  it('answers a variant path of the Messages API in its own envelope', () => {
    expect(envelopeForPath('/V1/MESSAGES/', undefined)).toBe('anthropic');
  });

  it('keeps the root path', () => {
    expect(routedPath('/')).toBe('/');
  });
});

describe('keyMayUseModel', () => {
  const scoped = { scope: { models: new ModelScope(['test-gpt', 'claude-*']) } };

  it('lets a key without a model scope use every model', () => {
    expect(keyMayUseModel(undefined, 'anything')).toBe(true);
    expect(keyMayUseModel({}, 'anything')).toBe(true);
    expect(keyMayUseModel({ scope: { endpoints: new Set(['messages'] as const) } }, 'x')).toBe(
      true,
    );
  });

  it('lets a scoped key use its exact ids and glob matches only', () => {
    expect(keyMayUseModel(scoped, 'test-gpt')).toBe(true);
    expect(keyMayUseModel(scoped, 'claude-sonnet')).toBe(true);
    expect(keyMayUseModel(scoped, 'test-gpt-2')).toBe(false);
    expect(keyMayUseModel(scoped, 'gpt-claude-x')).toBe(false);
  });
});
