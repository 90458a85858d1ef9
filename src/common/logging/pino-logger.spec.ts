import { accessLogger, createRootLogger } from './pino-logger';

function capture(): { lines: Record<string, unknown>[]; stream: { write(line: string): void } } {
  const lines: Record<string, unknown>[] = [];
  return { lines, stream: { write: (line) => lines.push(JSON.parse(line) as never) } };
}

describe('createRootLogger', () => {
  it('masks keys and credential headers wherever a line carries them', () => {
    const { lines, stream } = capture();
    const root = createRootLogger('info', stream);
    root.info({ apiKey: 'sk-1', provider: { apiKey: 'sk-2', name: 'p' } }, 'one');
    root.info({ headers: { authorization: 'Bearer sk-3', 'x-api-key': 'sk-4', accept: '*/*' } });
    expect(lines[0]).toMatchObject({ apiKey: '[redacted]', provider: { apiKey: '[redacted]' } });
    expect(lines[1].headers).toEqual({
      authorization: '[redacted]',
      'x-api-key': '[redacted]',
      accept: '*/*',
    });
  });
});

describe('accessLogger', () => {
  it("writes the root's level, time and service, and the request facts as they are", () => {
    const { lines, stream } = capture();
    const root = createRootLogger('info', stream);
    const facts = {
      requestId: 'req_1',
      status: 200,
      latencyMs: 1.25,
      usage: { inputTokens: 3, outputTokens: 4 },
      protectionUsage: [{ protection: 'shadow_agent_validation', model: 'm', costUsd: 0.1 }],
    };
    accessLogger(root).info(facts, 'request');
    root.info(facts, 'request');
    expect(lines).toHaveLength(2);
    const { time: accessTime, ...access } = lines[0];
    const { time: rootTime, ...viaRoot } = lines[1];
    expect(access).toEqual(viaRoot);
    expect(access).toMatchObject({ level: 30, service: 'reasoning-gateway', msg: 'request' });
    expect(typeof accessTime).toBe('string');
    expect(typeof rootTime).toBe('string');
  });

  it('stays at the level of its root', () => {
    const { lines, stream } = capture();
    accessLogger(createRootLogger('warn', stream)).info({ requestId: 'r' }, 'request');
    expect(lines).toHaveLength(0);
  });
});
