import { AgentPool } from './agent-pool';

describe('AgentPool', () => {
  it('keeps one agent per distinct connect timeout, created on first use, and destroys all', async () => {
    const pool = new AgentPool(
      { connections: null, keepAliveTimeout: 1000, headersTimeout: 1000, bodyTimeout: 1000 },
      10_000,
    );
    expect(pool.size).toBe(1);
    expect(pool.get(undefined)).toBe(pool.default);
    expect(pool.get(10_000)).toBe(pool.default);
    const short = pool.get(300);
    expect(short).not.toBe(pool.default);
    expect(pool.get(300)).toBe(short);
    expect(pool.size).toBe(2);
    await pool.destroy();
    expect(pool.default.destroyed).toBe(true);
    expect(short.destroyed).toBe(true);
  });
});
