import { EventEmitter } from 'node:events';
import type { ConfigService } from '@nestjs/config';
import { Subject, from, lastValueFrom, toArray } from 'rxjs';
import type { CatalogModel } from '../../../catalog/catalog.types';
import type { GatewayRequest, GatewayResponse } from '../../../common/request-context';
import type { AllConfig } from '../../../config';
import type { CanonicalEvent, CanonicalRequest } from '../../../core/canonical';
import type { JudgeCall, JudgeClient, JudgeResult } from '../judge/judge-client';
import { JudgeError } from '../judge/judge-client';
import { ProtectionReport } from '../protection-report';
import { ProtectionsHealth } from '../protections-health';
import { defaultShadowSettings } from './settings';
import { ShadowAgentProtection } from './shadow-agent.protection';

const ANSWER: CanonicalEvent[] = [
  { type: 'message_start', id: 'm', model: 'x', created: 1, inputTokens: 5 },
  { type: 'block_start', index: 0, block: { kind: 'text' } },
  { type: 'text_delta', index: 0, text: 'Hello.' },
  { type: 'block_stop', index: 0 },
  { type: 'message_stop', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 2 } },
];

const REQUEST: CanonicalRequest = {
  model: 'm',
  system: [{ type: 'text', text: 'Be brief.' }],
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'Hi' }] }],
  tools: [],
  stop: [],
  stream: false,
  extra: {},
};

const SETTINGS = { ...defaultShadowSettings('judge-mini', 5000), model: 'judge-mini' };

const config = {
  get: () => ({ shadowAgentModel: 'judge-mini', shadowAgentTimeoutMs: 5000 }),
} as unknown as ConfigService<AllConfig, true>;

/** A judge that answers only when its call is aborted (as JudgeClient does), recording calls. */
function hangingJudge(): { client: JudgeClient; calls: JudgeCall[] } {
  const calls: JudgeCall[] = [];
  const client = {
    call: (call: JudgeCall) => {
      calls.push(call);
      return new Promise<JudgeResult>((_resolve, reject) =>
        call.signal?.addEventListener('abort', () =>
          reject(new JudgeError('aborted', 'judge call cancelled')),
        ),
      );
    },
  } as unknown as JudgeClient;
  return { client, calls };
}

function setup(client: JudgeClient) {
  const health = new ProtectionsHealth();
  health.register('shadow_agent_validation');
  const protection = new ShadowAgentProtection(client, health, config);
  const res = Object.assign(new EventEmitter(), {
    writableFinished: false,
  }) as unknown as GatewayResponse;
  const req = { ctx: { requestId: 'req-1' } } as GatewayRequest;
  const report = new ProtectionReport();
  const operator = protection.output(SETTINGS, {
    req,
    res,
    report,
    request: REQUEST,
    model: {} as CatalogModel,
  });
  return { health, res, report, operator };
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('ShadowAgentProtection', () => {
  it('cancels the judge when the client goes away, without counting a judge error', async () => {
    const { client, calls } = hangingJudge();
    const { health, res, operator } = setup(client);
    const source = new Subject<CanonicalEvent>();
    // An unstreamed answer: collected to the end, never unsubscribed by the service.
    const out = lastValueFrom(source.pipe(operator, toArray()));
    ANSWER.forEach((e) => source.next(e));
    source.complete();
    await flush();
    expect(calls).toHaveLength(1);
    expect(calls[0].signal?.aborted).toBe(false);

    res.emit('close');
    await out;
    expect(calls[0].signal?.aborted).toBe(true);
    expect(health.snapshot().shadow_agent_validation).toMatchObject({ errors: 0, blocked: 0 });
  });

  it('leaves the judge alone when the response closes after it finished', async () => {
    const { client, calls } = hangingJudge();
    const { res, operator } = setup(client);
    const source = new Subject<CanonicalEvent>();
    const subscription = source.pipe(operator).subscribe();
    ANSWER.forEach((e) => source.next(e));
    await flush();
    (res as unknown as { writableFinished: boolean }).writableFinished = true;
    res.emit('close');
    expect(calls[0].signal?.aborted).toBe(false);
    subscription.unsubscribe();
    expect(calls[0].signal?.aborted).toBe(true);
  });

  it('reports a judge that fails while the client is there as a judge error', async () => {
    const client = {
      call: () => Promise.reject(new JudgeError('upstream', 'HTTP 502')),
    } as unknown as JudgeClient;
    const { health, report, operator } = setup(client);
    const events = await lastValueFrom(from(ANSWER).pipe(operator, toArray()));
    expect(events[events.length - 1]).toMatchObject({ finishReason: 'content_filter' });
    expect(health.snapshot().shadow_agent_validation).toMatchObject({ errors: 1, blocked: 1 });
    expect(report.toString()).toBe('shadow_agent_validation=blocked;error="HTTP 502"');
  });
});
