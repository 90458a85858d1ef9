import { randomUUID } from 'node:crypto';
import {
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { CatalogModule } from '../catalog/catalog.module';
import { CatalogService } from '../catalog/catalog.service';
import type { AllConfig } from '../config';
import { DATABASE } from '../db/db.module';
import { MetricsService } from '../observability/metrics/metrics.service';
import type { OpenDatabase } from '../db/database';
import { BudgetCounters } from './budget-counters';
import { BUDGET_GATE, ReservingBudgetGate } from './budget.gate';
import { USAGE_REPOSITORY, type UsageRepository } from './ledger-row';
import { LedgerWriter } from './ledger.writer';
import { LedgerRetention } from './retention';
import { SpendTracker } from './spend.tracker';
import { TeamBudgets } from './team-budgets';
import { KyselyUsageRepository } from './usage.repository';
import { UsageRecorder } from './usage.recorder';
import { UsageLedgerOffError } from '../common/errors/gateway-errors';

/**
 * The usage pipeline of one replica: recorder → writer → database, with the spend
 * tracker fed from both ends, and the budgets: counters and reservations (settled by the
 * recorder when a request ends) and the team budgets. Null members when KEY_STORE=off.
 */
@Injectable()
export class UsagePipeline implements OnModuleInit, OnApplicationShutdown {
  readonly repo: UsageRepository | null;
  readonly spend: SpendTracker | null;
  readonly ledger: LedgerWriter | null;
  readonly recorder: UsageRecorder | null;
  readonly counters: BudgetCounters | null;
  readonly teams: TeamBudgets | null;
  readonly budgets: ReservingBudgetGate | null;
  private readonly retention: LedgerRetention | null;
  private readonly instanceId = randomUUID();

  /** The ledger's repository; a 503 when the key store, and with it the ledger, is off. */
  requireRepo(): UsageRepository {
    if (this.repo === null) {
      throw new UsageLedgerOffError();
    }
    return this.repo;
  }

  /** The ledger writer; a 503 when the ledger is off. */
  requireLedger(): LedgerWriter {
    if (this.ledger === null) {
      throw new UsageLedgerOffError();
    }
    return this.ledger;
  }

  constructor(
    @Inject(DATABASE) private readonly database: OpenDatabase | null,
    config: ConfigService<AllConfig, true>,
    catalog: CatalogService,
  ) {
    const store = config.get('store', { infer: true });
    if (!database) {
      this.repo = this.spend = this.ledger = this.recorder = this.retention = null;
      this.counters = this.teams = this.budgets = null;
      return;
    }
    this.repo = new KyselyUsageRepository(database.db);
    this.spend = new SpendTracker(this.repo, store.budgetCountsProtections);
    this.ledger = new LedgerWriter(this.repo, database.events, this.spend, {
      flushIntervalMs: store.flushIntervalMs,
      maxBufferedRows: store.bufferMaxRows,
      instanceId: this.instanceId,
    });
    this.recorder = new UsageRecorder(catalog, this.ledger);
    this.counters = new BudgetCounters(database.db, store.budgetCountsProtections);
    this.teams = new TeamBudgets(database.db, database.events);
    this.budgets = new ReservingBudgetGate(
      this.counters,
      this.teams,
      store.budgetCountsProtections,
      store.budgetReservationTtlMs,
    );
    this.retention = new LedgerRetention(this.repo, store.retentionDays);
  }

  async onModuleInit(): Promise<void> {
    const { database, ledger, spend, budgets, teams } = this;
    if (!database || !ledger || !spend || !budgets || !teams) {
      return;
    }
    database.events.subscribe('gw_usage', (payload) => {
      try {
        const { from, keys } = JSON.parse(payload) as { from: string; keys: string[] };
        if (from !== this.instanceId) {
          spend.changed(keys);
        }
      } catch {
        // not ours
      }
    });
    // The pool must outlive the last flush, whichever shutdown hook Nest calls first.
    database.beforeClose(() => ledger.close());
    // Requests drained at shutdown settle their reservations before the pool goes too.
    database.beforeClose(() => budgets.close());
    ledger.start();
    this.retention?.start();
    budgets.start();
    await teams.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.retention?.stop();
    this.spend?.close();
    this.teams?.stop();
    await this.ledger?.close();
    await this.budgets?.close();
  }
}

/**
 * The key store's database, seen through the usage ledger's writes, as metrics read when
 * Prometheus scrapes (none when there is no ledger).
 */
@Injectable()
export class LedgerMetrics implements OnApplicationBootstrap {
  constructor(
    private readonly metrics: MetricsService,
    private readonly pipeline: UsagePipeline,
  ) {}

  onApplicationBootstrap(): void {
    const ledger = this.pipeline.ledger;
    if (ledger === null) {
      return;
    }
    this.metrics.gauge({
      name: 'gateway_database_up',
      help: '1 unless usage-ledger writes to the database are failing and being retried.',
      collect() {
        this.set(ledger.snapshot().writing ? 1 : 0);
      },
    });
    this.metrics.gauge({
      name: 'gateway_usage_ledger_buffered_rows',
      help: 'Ledger rows waiting to be written.',
      collect() {
        this.set(ledger.snapshot().buffered);
      },
    });
    this.metrics.counter({
      name: 'gateway_usage_ledger_rows_total',
      help: 'Ledger rows written, and dropped because the buffer was full during an outage.',
      labelNames: ['state'],
      collect() {
        const s = ledger.snapshot();
        this.reset();
        this.inc({ state: 'written' }, s.written);
        this.inc({ state: 'dropped' }, s.dropped);
      },
    });
  }
}

/**
 * Usage ledger, spend and budgets. Global so that the limits find `BUDGET_GATE` without
 * importing this module.
 */
@Global()
@Module({
  imports: [CatalogModule],
  providers: [
    UsagePipeline,
    LedgerMetrics,
    {
      provide: BUDGET_GATE,
      inject: [UsagePipeline],
      useFactory: (pipeline: UsagePipeline): ReservingBudgetGate | null => pipeline.budgets,
    },
    {
      provide: USAGE_REPOSITORY,
      inject: [UsagePipeline],
      useFactory: (pipeline: UsagePipeline): UsageRepository | null => pipeline.repo,
    },
  ],
  exports: [UsagePipeline, BUDGET_GATE, USAGE_REPOSITORY],
})
export class UsageModule {}
