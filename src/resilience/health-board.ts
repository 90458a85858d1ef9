import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CatalogService } from '../catalog/catalog.service';
import type { CatalogDeployment, CatalogModel } from '../catalog/catalog.types';
import type { AllConfig } from '../config';
import { MetricsService } from '../observability/metrics/metrics.service';
import { type BreakerSettings, type BreakerState, DeploymentHealth } from './deployment-health';
import { DeploymentLimiter } from './deployment-limiter';
import type { Candidate } from './deployment-picker';

/** One deployment's state, as `GET /health/upstreams` shows it. */
export interface DeploymentView {
  model: string;
  provider: string;
  upstream_id: string;
  weight: number;
  state: BreakerState;
  in_flight: number;
  ejections: number;
  /** ISO time the cooldown of an open breaker ends. */
  open_until?: string;
}

const STATE_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/**
 * The health of every deployment of every catalog model, built once at boot (the catalog
 * does not change at run time), so the request path only looks candidates up. Logs each
 * breaker transition and exposes the states as metrics, read at scrape time.
 */
@Injectable()
export class HealthBoard implements OnModuleInit {
  private readonly logger = new Logger(HealthBoard.name);
  private readonly byModel = new Map<string, Candidate[]>();
  private readonly settings: BreakerSettings;

  constructor(
    private readonly catalog: CatalogService,
    private readonly metrics: MetricsService,
    config: ConfigService<AllConfig, true>,
  ) {
    const c = config.get('upstream', { infer: true });
    this.settings = {
      consecutiveFailures: c.ejectConsecutiveFailures,
      failureRate: 0.5,
      window: 20,
      cooldownMs: c.ejectCooldownMs,
      maxCooldownMs: c.ejectMaxCooldownMs,
    };
  }

  onModuleInit(): void {
    const onTransition = (h: DeploymentHealth, from: BreakerState): void => {
      const log = `deployment ${h.model}@${h.provider}: ${from} -> ${h.state}`;
      if (h.state === 'open') {
        this.logger.warn(
          `${log} (ejection ${h.ejections}, until ${new Date(h.openUntil).toISOString()})`,
        );
      } else {
        this.logger.log(log);
      }
    };
    for (const model of this.catalog.listAll()) {
      const candidates: Candidate[] = [];
      for (const deployment of deploymentsOf(model)) {
        const others = (): boolean =>
          candidates.some((c) => c.deployment !== deployment && c.health.state === 'closed');
        candidates.push({
          deployment,
          limiter: deployment.limits && new DeploymentLimiter(deployment.limits),
          health: new DeploymentHealth(
            `${model.id}@${deployment.provider.name}`,
            model.id,
            deployment.provider.name,
            this.settings,
            onTransition,
            others,
          ),
        });
      }
      this.byModel.set(model.id, candidates);
    }
    const all = (): Candidate[] => this.all();
    this.metrics.gauge({
      name: 'gateway_upstream_breaker_state',
      help: 'Breaker state per deployment: 0 closed, 1 half-open, 2 open (ejected).',
      labelNames: ['model', 'provider'],
      collect() {
        this.reset();
        for (const c of all()) {
          this.set(
            { model: c.health.model, provider: c.health.provider },
            STATE_VALUE[c.health.state],
          );
        }
      },
    });
    this.metrics.gauge({
      name: 'gateway_upstream_ejections',
      help: 'Times each deployment was ejected since start.',
      labelNames: ['model', 'provider'],
      collect() {
        this.reset();
        for (const c of all()) {
          this.set({ model: c.health.model, provider: c.health.provider }, c.health.ejections);
        }
      },
    });
  }

  /** The deployments of `model` with their health. */
  candidatesOf(model: CatalogModel): readonly Candidate[] {
    const found = this.byModel.get(model.id);
    if (found === undefined) {
      throw new Error(`model '${model.id}' has no health entry`);
    }
    return found;
  }

  /** Every deployment's state, in catalog order. */
  views(now = Date.now()): DeploymentView[] {
    return this.all().map(({ deployment, health }) => {
      health.available(now);
      return {
        model: health.model,
        provider: health.provider,
        upstream_id: deployment.upstreamId,
        weight: deployment.weight,
        state: health.state,
        in_flight: health.inFlight,
        ejections: health.ejections,
        ...(health.state === 'open'
          ? { open_until: new Date(health.openUntil).toISOString() }
          : {}),
      };
    });
  }

  private all(): Candidate[] {
    return [...this.byModel.values()].flat();
  }
}

/** A model's deployments whose provider has its key (its list, or its one provider). */
export function deploymentsOf(model: CatalogModel): readonly CatalogDeployment[] {
  const all = model.deployments ?? [
    { provider: model.provider, upstreamId: model.upstreamId, weight: 1 },
  ];
  const usable = all.filter((d) => d.provider.available);
  return usable.length > 0 ? usable : all.slice(0, 1);
}
