import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { MissingSystemPromptError } from '../common/errors/gateway-errors';
import { RequireSystemPrompt, SystemPromptGuard } from './system-prompt.guard';
import { chatSystemPrompt } from '../formats/chat-completions/chat.system-prompt';
import { messagesSystemPrompt } from '../formats/messages/messages.system-prompt';

class Routes {
  @RequireSystemPrompt(chatSystemPrompt)
  chat(): void {}

  @RequireSystemPrompt(messagesSystemPrompt)
  messages(): void {}

  unchecked(): void {}
}

function context(handler: keyof Routes, body: unknown): ExecutionContext {
  return {
    switchToHttp: () => ({ getRequest: () => ({ body }) }),
    getHandler: () => Routes.prototype[handler],
    getClass: () => Routes,
  } as unknown as ExecutionContext;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('SystemPromptGuard', () => {
  const guard = new SystemPromptGuard(new Reflector());

  it('lets a chat request with a system message through', () => {
    const body = {
      messages: [
        { role: 'system', content: 'x' },
        { role: 'user', content: 'y' },
      ],
    };
    expect(guard.canActivate(context('chat', body))).toBe(true);
  });

  it('rejects a chat request without a system prompt with a 400 naming messages', () => {
    const err = thrown(() =>
      guard.canActivate(context('chat', { messages: [{ role: 'user', content: 'y' }] })),
    );
    expect(err).toBeInstanceOf(MissingSystemPromptError);
    expect(err).toMatchObject({
      status: 400,
      kind: 'invalid_request',
      param: 'messages',
      code: 'missing_system_prompt',
    });
  });

  it('applies the check declared on the handler, not another one', () => {
    // A chat-style body has no top-level `system`, so the messages check rejects it.
    const body = { messages: [{ role: 'system', content: 'x' }] };
    expect(thrown(() => guard.canActivate(context('messages', body)))).toMatchObject({
      param: 'system',
    });
    expect(guard.canActivate(context('messages', { system: 'x', messages: [] }))).toBe(true);
  });

  it('lets any request through a handler without a declared check', () => {
    expect(guard.canActivate(context('unchecked', { messages: [] }))).toBe(true);
  });
});
