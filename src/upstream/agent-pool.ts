import { Agent } from 'undici';

/** The options every agent shares; only the connect timeout differs between them. */
export interface AgentOptions {
  /** Connections per origin; null: uncapped, so concurrent streams never queue. */
  connections: number | null;
  keepAliveTimeout: number;
  headersTimeout: number;
  bodyTimeout: number;
}

/**
 * undici applies a connect timeout per agent, not per request: one agent per distinct
 * connect timeout (the environment's, and each other value the catalog sets), created on
 * first use and shared by every provider with that value. Each keeps its own keep-alive
 * pools; a handful of values at most, as the catalog has.
 */
export class AgentPool {
  readonly default: Agent;
  private readonly others = new Map<number, Agent>();

  constructor(
    private readonly options: AgentOptions,
    private readonly defaultConnectMs: number,
  ) {
    this.default = this.create(defaultConnectMs);
  }

  /** The agent for `connectMs` (the default one when unset or equal). */
  get(connectMs: number | undefined): Agent {
    if (connectMs === undefined || connectMs === this.defaultConnectMs) {
      return this.default;
    }
    let agent = this.others.get(connectMs);
    if (agent === undefined) {
      agent = this.create(connectMs);
      this.others.set(connectMs, agent);
    }
    return agent;
  }

  /** How many agents exist (for tests and diagnostics). */
  get size(): number {
    return 1 + this.others.size;
  }

  /** Destroys every agent and its open sockets. */
  async destroy(): Promise<void> {
    await Promise.all([this.default, ...this.others.values()].map((a) => a.destroy()));
  }

  private create(connectMs: number): Agent {
    return new Agent({ ...this.options, connect: { timeout: connectMs } });
  }
}
