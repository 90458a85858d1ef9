import { ConfigValidationError } from '../../config';
import { readObservabilityConfig } from '../../config/observability.config';
import { MetricsService } from './metrics.service';

describe('observability config', () => {
  it('keeps tracing off unless an OTLP endpoint is set and nothing disables it', () => {
    expect(readObservabilityConfig({}).tracingEnabled).toBe(false);
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(readObservabilityConfig(on).tracingEnabled).toBe(true);
    expect(
      readObservabilityConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/v1/traces' })
        .tracingEnabled,
    ).toBe(true);
    expect(readObservabilityConfig({ ...on, OTEL_TRACES_EXPORTER: 'none' }).tracingEnabled).toBe(
      false,
    );
    expect(readObservabilityConfig({ ...on, OTEL_SDK_DISABLED: 'true' }).tracingEnabled).toBe(
      false,
    );
  });

  it('rejects a short metrics token and a bad port with a ConfigValidationError', () => {
    expect(() => readObservabilityConfig({ METRICS_TOKEN: 'short' })).toThrow(
      ConfigValidationError,
    );
    expect(() => readObservabilityConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
    expect(readObservabilityConfig({ METRICS_PER_KEY: 'true' }).metricsPerKey).toBe(true);
  });
});

describe('MetricsService', () => {
  const service = (): MetricsService => new MetricsService(readObservabilityConfig({}));

  it('counts each protection verdict of the report, without its details', async () => {
    const m = service();
    m.requestEnded({
      endpoint: '/v1/messages',
      status: 200,
      outcome: 'success',
      durationSeconds: 0.1,
      protections: 'prompt_injection=flagged;score=0.91,system_prompt_filter=pass',
    });
    const text = await m.scrape();
    expect(text).toContain(
      'gateway_protection_verdicts_total{protection="prompt_injection",verdict="flagged"} 1',
    );
    expect(text).toContain(
      'gateway_protection_verdicts_total{protection="system_prompt_filter",verdict="pass"} 1',
    );
    expect(text).not.toContain('score');
  });

  it('lets other modules register metrics under gateway_ or gen_ai_ names only', async () => {
    const m = service();
    const budget = m.counter({
      name: 'gateway_budget_rejections_total',
      help: 'x',
      labelNames: ['scope'],
    });
    budget.inc({ scope: 'key' });
    expect(await m.scrape()).toContain('gateway_budget_rejections_total{scope="key"} 1');
    expect(() => m.gauge({ name: 'db_up', help: 'x' })).toThrow(/must match/);
  });
});
