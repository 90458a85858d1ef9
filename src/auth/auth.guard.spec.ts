import { Controller, Get, Logger, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthenticationError } from '../common/errors/gateway-errors';
import type { RequestContext } from '../common/request-context';
import { fakeAuthConfig } from '../testing/fake-config';
import { ApiKeyService } from './api-key.service';
import { AuthGuard } from './auth.guard';
import { Public } from '../common/public.decorator';
import { thrown } from '../testing/thrown';

const fakeConfig = fakeAuthConfig;

@Controller()
class PrivateController {
  @Get()
  get(): string {
    return 'secret';
  }
}

@Controller()
class MixedController {
  @Public()
  @Get()
  health(): string {
    return 'ok';
  }

  @Get()
  other(): string {
    return 'secret';
  }
}

@Public()
@Controller()
class PublicController {
  @Get()
  anything(): string {
    return 'ok';
  }
}

interface FakeRequest {
  headers: Record<string, string | undefined>;
  ctx: RequestContext;
}

function context(
  headers: Record<string, string | undefined>,
  cls: new () => object = PrivateController,
  handlerName?: string,
): { ctx: ExecutionContext; req: FakeRequest } {
  const req: FakeRequest = { headers, ctx: { requestId: 'req_1', startedAt: 0n } };
  const proto = cls.prototype as Record<string, unknown>;
  const name = handlerName ?? Object.getOwnPropertyNames(proto).find((n) => n !== 'constructor')!;
  const ctx = {
    switchToHttp: () => ({ getRequest: () => req, getResponse: () => ({}) }),
    getHandler: () => proto[name],
    getClass: () => cls,
  } as unknown as ExecutionContext;
  return { ctx, req };
}

describe('AuthGuard', () => {
  const KEY = 'sk-gw-correct-key';
  let guard: AuthGuard;

  beforeAll(() => {
    guard = new AuthGuard(new ApiKeyService(fakeConfig([KEY, 'sk-gw-second'])), new Reflector());
  });

  it('accepts a valid key sent as Authorization: Bearer', () => {
    const { ctx, req } = context({ authorization: `Bearer ${KEY}` });
    expect(guard.canActivate(ctx)).toBe(true);
    expect(req.ctx.keyId).toMatch(/^[0-9a-f]{12}$/);
  });

  it('accepts the bearer scheme case-insensitively with extra spaces', () => {
    const { ctx } = context({ authorization: `  bearer    ${KEY}  ` });
    expect(guard.canActivate(ctx)).toBe(true);
  });

  it('accepts a valid key sent as x-api-key', () => {
    const { ctx, req } = context({ 'x-api-key': KEY });
    expect(guard.canActivate(ctx)).toBe(true);
    expect(req.ctx.keyId).toBeDefined();
  });

  it('accepts a request whose x-api-key is right when the bearer key is wrong', () => {
    const { ctx } = context({ authorization: 'Bearer wrong', 'x-api-key': KEY });
    expect(guard.canActivate(ctx)).toBe(true);
  });

  it('accepts a request whose bearer key is right when x-api-key is wrong', () => {
    const { ctx } = context({ authorization: `Bearer ${KEY}`, 'x-api-key': 'wrong' });
    expect(guard.canActivate(ctx)).toBe(true);
  });

  it('sets a key id that identifies the key without revealing it', () => {
    const first = context({ authorization: `Bearer ${KEY}` });
    const second = context({ 'x-api-key': 'sk-gw-second' });
    expect(guard.canActivate(first.ctx)).toBe(true);
    expect(guard.canActivate(second.ctx)).toBe(true);
    expect(first.req.ctx.keyId).not.toBe(KEY);
    expect(KEY).not.toContain(first.req.ctx.keyId!);
    expect(first.req.ctx.keyId).not.toBe(second.req.ctx.keyId);
  });

  it('rejects a wrong key with AuthenticationError code invalid_api_key', () => {
    const { ctx, req } = context({ authorization: 'Bearer sk-gw-wrong' });
    const err = thrown(() => guard.canActivate(ctx));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: 'invalid_api_key' });
    expect(req.ctx.keyId).toBeUndefined();
  });

  it('rejects when both headers carry wrong keys', () => {
    const { ctx } = context({ authorization: 'Bearer a', 'x-api-key': 'b' });
    expect(thrown(() => guard.canActivate(ctx))).toMatchObject({ code: 'invalid_api_key' });
  });

  it('does not echo the presented key in the error', () => {
    const { ctx } = context({ 'x-api-key': 'sk-leaky-value' });
    expect((thrown(() => guard.canActivate(ctx)) as Error).message).not.toContain('sk-leaky');
  });

  it('rejects a request without a key with code null and a helpful message', () => {
    const { ctx } = context({});
    const err = thrown(() => guard.canActivate(ctx));
    expect(err).toBeInstanceOf(AuthenticationError);
    expect(err).toMatchObject({ status: 401, code: null });
    expect((err as Error).message).toContain('Authorization: Bearer');
    expect((err as Error).message).toContain('x-api-key');
  });

  it.each([
    ['an empty x-api-key', { 'x-api-key': '' }],
    ['a bearer header without a key', { authorization: 'Bearer ' }],
    ['a non-bearer authorization scheme', { authorization: `Basic ${KEY}` }],
  ])('treats %s as no key at all', (_what, headers) => {
    const { ctx } = context(headers);
    expect(thrown(() => guard.canActivate(ctx))).toMatchObject({ status: 401, code: null });
  });

  it('lets a @Public() handler through without a key', () => {
    const { ctx, req } = context({}, MixedController, 'health');
    expect(guard.canActivate(ctx)).toBe(true);
    expect(req.ctx.keyId).toBeUndefined();
  });

  it('still protects the other handlers of a class with a public handler', () => {
    const { ctx } = context({}, MixedController, 'other');
    expect(() => guard.canActivate(ctx)).toThrow(AuthenticationError);
  });

  it('lets every handler of a @Public() class through', () => {
    const { ctx } = context({ authorization: 'Bearer wrong' }, PublicController);
    expect(guard.canActivate(ctx)).toBe(true);
  });
});

describe('AuthGuard with a development key', () => {
  it('accepts the development key when no keys are configured', () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const guard = new AuthGuard(
      new ApiKeyService(fakeConfig([], 'development', 'dev-123')),
      new Reflector(),
    );
    warn.mockRestore();
    expect(guard.canActivate(context({ 'x-api-key': 'dev-123' }).ctx)).toBe(true);
    expect(() => guard.canActivate(context({ 'x-api-key': 'dev-124' }).ctx)).toThrow(
      AuthenticationError,
    );
  });
});
