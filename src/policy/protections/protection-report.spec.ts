import { ProtectionReport } from './protection-report';

describe('ProtectionReport', () => {
  it('lists verdicts in order, tokens bare and free text quoted and header-safe', () => {
    const report = new ProtectionReport();
    report.set('prompt_injection_protection', 'pass', { score: '0.05' });
    report.set('shadow_agent_validation', 'blocked', { reason: 'says "no", then; stops\u00e9' });
    expect(report.toString()).toBe(
      'prompt_injection_protection=pass;score=0.05, shadow_agent_validation=blocked;reason="says no then stops"',
    );
  });

  it('keeps only numbers and fixed tokens in the logged value, whatever the reason looks like', () => {
    const report = new ProtectionReport();
    report.set('system_prompt_filter', 'redacted', { leaks: 2 });
    report.set('shadow_agent_validation', 'blocked', { reason: 'sk-live-ZEBRA-42' });
    expect(report.toString(false)).toBe(
      'system_prompt_filter=redacted;leaks=2, shadow_agent_validation=blocked',
    );
    expect(report.toString()).toContain('reason=sk-live-ZEBRA-42');
  });

  it('settles what is still pending, and only that', () => {
    const report = new ProtectionReport();
    report.set('system_prompt_filter', 'pending');
    report.set('shadow_agent_validation', 'pending');
    report.set('shadow_agent_validation', 'pass');
    report.settlePending('error');
    expect(report.toString()).toBe('system_prompt_filter=error, shadow_agent_validation=pass');
  });
});
