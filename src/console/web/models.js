// Models: the catalog with prices and whether each provider is configured.
import { api, fmtInt, h, stateBox } from './ui.js';

const price = (n) => (n === null || n === undefined ? '—' : `$${n}`);

export async function modelsPage() {
  const { data, providers } = await api('GET', '/models');
  const missing = providers.filter((p) => !p.configured);
  const out = [h('h1', {}, 'Models')];
  if (missing.length > 0) {
    out.push(
      h(
        'p',
        { class: 'state', role: 'note' },
        'Providers without a key (their models cannot be called until it is set): ',
        ...missing.map((p, i) => [
          i ? ', ' : '',
          h('b', {}, p.name),
          p.key_env ? [' — set ', h('code', {}, p.key_env)] : '',
        ]),
      ),
    );
  }
  if (data.length === 0) {
    out.push(
      stateBox('The catalog lists no model: add models to config/catalog.yaml and restart.'),
    );
    return out;
  }
  if (!data.some((m) => m.provider_configured)) {
    out.push(
      stateBox(
        'No model can be called yet: set a provider key (see the README, “Providers”) and restart the gateway.',
      ),
    );
  }
  out.push(
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...[
              'Model',
              'Family',
              'Provider',
              'Provider configured',
              'Input / 1M',
              'Output / 1M',
              'Cached input / 1M',
              'Context',
              'Endpoints',
              'Capabilities',
            ].map((t) => h('th', { scope: 'col' }, t)),
          ),
        ),
        h(
          'tbody',
          {},
          ...data.map((m) =>
            h(
              'tr',
              { 'data-model': m.id },
              h('td', { class: 'mono' }, m.id),
              h('td', {}, m.family),
              h('td', {}, m.provider),
              h(
                'td',
                { class: 'configured' },
                h(
                  'span',
                  { class: `badge ${m.provider_configured ? 'active' : 'expired'}` },
                  m.provider_configured ? 'yes' : 'no',
                ),
                m.provider_configured || !m.provider_key_env
                  ? null
                  : [' set ', h('code', {}, m.provider_key_env)],
              ),
              h('td', {}, price(m.pricing_per_million_usd.input)),
              h('td', {}, price(m.pricing_per_million_usd.output)),
              h('td', {}, price(m.pricing_per_million_usd.cached_input)),
              h('td', {}, fmtInt(m.context_window)),
              h('td', {}, m.endpoints.join(', ')),
              h(
                'td',
                {},
                Object.entries(m.capabilities)
                  .filter(([, on]) => on)
                  .map(([c]) => c)
                  .join(', ') || '—',
              ),
            ),
          ),
        ),
      ),
    ),
  );
  return out;
}
