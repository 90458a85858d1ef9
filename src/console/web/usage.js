// Usage: totals, charts over time / by key / by model, recent requests, CSV export.
import { all, api, fmtDate, fmtInt, fmtUsd, getSession, h, stateBox, toast } from './ui.js';

const RANGES = { '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };
const METRICS = {
  requests: { label: 'Requests', of: (r) => r.requests },
  tokens: { label: 'Tokens', of: (r) => (r.input_tokens ?? 0) + (r.output_tokens ?? 0) },
  cost: { label: 'Cost (USD)', of: (r) => Number(r.cost_usd ?? 0) },
};
const charts = [];
const state = { range: '7d', metric: 'requests', key: '', team: '' };

export async function usagePage() {
  const session = getSession();
  const keys = await all('/keys');
  const names = new Map(keys.map((k) => [k.id, k.name ?? k.id]));
  const out = [h('h1', {}, 'Usage')];
  if (session.role === 'member' && keys.length === 0) {
    out.push(
      stateBox(
        'Your team has no keys yet: create one on the Keys page, call the gateway with it, and its usage shows here.',
      ),
    );
    return out;
  }
  const range = select(
    'Range',
    Object.keys(RANGES).map((r) => [r, `Last ${r}`]),
    state.range,
    (v) => (state.range = v),
  );
  const metric = select(
    'Metric',
    Object.entries(METRICS).map(([k, m]) => [k, m.label]),
    state.metric,
    (v) => (state.metric = v),
  );
  const keyOptions = keys.map((k) => [k.id, `${k.name ?? k.id}${k.owner ? ` (${k.owner})` : ''}`]);
  // A member's usage is their whole team's (revoked keys too): the server scopes it.
  const key = select(
    'Key',
    [['', session.role === 'admin' ? 'All keys' : `All keys of ${session.team}`], ...keyOptions],
    state.key,
    (v) => (state.key = v),
  );
  const teams = [...new Set(keys.map((k) => k.owner).filter(Boolean))].sort();
  const team =
    session.role === 'admin'
      ? select(
          'Team',
          [['', 'All teams'], ...teams.map((t) => [t, t])],
          state.team,
          (v) => (state.team = v),
        )
      : null;
  const exportButton = h('button', { type: 'button' }, 'Export CSV');
  out.push(h('div', { class: 'toolbar' }, range, team, key, metric, exportButton));
  const body = h('div', {}, stateBox('Loading usage…'));
  out.push(body);
  const to = new Date();
  const from = new Date(to.getTime() - RANGES[state.range]);
  // Key and team; the time range is added per use, so that an export made later still
  // ends now and includes the newest rows.
  const scope = [
    state.key ? `key_id=${encodeURIComponent(state.key)}` : '',
    state.team && session.role === 'admin' ? `team=${encodeURIComponent(state.team)}` : '',
  ];
  const q = [
    `from=${encodeURIComponent(from.toISOString())}`,
    `to=${encodeURIComponent(to.toISOString())}`,
    ...scope,
  ]
    .filter(Boolean)
    .join('&');
  const bucket = state.range === '24h' ? 'hour' : 'day';
  const [time, byKey, byModel, recent] = await Promise.all([
    api('GET', `/usage?group_by=${bucket}&${q}`),
    api('GET', `/usage?group_by=key&${q}`),
    api('GET', `/usage?group_by=model&${q}`),
    api('GET', `/usage/requests?limit=50&${q}`),
  ]);
  exportButton.addEventListener('click', () => void exportCsv(RANGES[state.range], scope));
  const t = time.totals;
  const m = METRICS[state.metric];
  if (t.requests === 0) {
    body.replaceChildren(
      stateBox(
        'No requests in this range. Call the gateway with a key (the Keys page shows snippets); requests appear here within a second.',
      ),
    );
    return out;
  }
  body.replaceChildren(
    h(
      'div',
      { class: 'totals' },
      h('div', {}, 'Requests', h('b', {}, fmtInt(t.requests))),
      h('div', {}, 'Errors', h('b', {}, fmtInt(t.errors))),
      h('div', {}, 'Input tokens', h('b', {}, fmtInt(t.input_tokens))),
      h('div', {}, 'Output tokens', h('b', {}, fmtInt(t.output_tokens))),
      h('div', {}, 'Cost', h('b', {}, fmtUsd(t.cost_usd))),
    ),
    h(
      'div',
      { class: 'charts' },
      chartBox(
        `${m.label} over time (UTC ${bucket})`,
        'line',
        ...series(time.data, bucket, from, to, m.of),
        true,
      ),
      chartBox(
        `${m.label} by key`,
        'bar',
        byKey.data.map((r) => names.get(r.key_id) ?? r.key_id ?? '(none)'),
        byKey.data.map(m.of),
      ),
      chartBox(
        `${m.label} by model`,
        'bar',
        byModel.data.map((r) => r.model ?? '(none)'),
        byModel.data.map(m.of),
      ),
    ),
    h('h2', {}, 'Recent requests'),
    recentTable(recent.data, names),
  );
  return out;
}

/** Every bucket of the range, zero where the ledger has no row, so gaps read as gaps. */
function series(rows, bucket, from, to, of) {
  const step = bucket === 'hour' ? 3_600_000 : 86_400_000;
  const width = bucket === 'hour' ? 13 : 10;
  const byBucket = new Map(rows.map((r) => [r[bucket].slice(0, width), of(r)]));
  const labels = [];
  const values = [];
  for (let t = Math.floor(from.getTime() / step) * step; t <= to.getTime(); t += step) {
    const label = new Date(t).toISOString().slice(0, width);
    labels.push(bucket === 'hour' ? `${label.slice(5)}:00` : label.slice(5));
    values.push(byBucket.get(label) ?? 0);
  }
  return [labels, values];
}

function select(label, options, value, set) {
  const el = h(
    'select',
    {
      'aria-label': label,
      onchange: () => {
        set(el.value);
        window.dispatchEvent(new HashChangeEvent('hashchange'));
      },
    },
    ...options.map(([v, text]) => h('option', { value: v, selected: v === value }, text)),
  );
  return el;
}

function chartBox(title, type, labels, values, wide = false) {
  const canvas = h('canvas', {
    role: 'img',
    'aria-label': `${title}: ${labels.map((l, i) => `${l} ${values[i]}`).join(', ')}`,
  });
  const box = h(
    'section',
    { class: `chart ${wide ? 'wide' : ''}` },
    h('h2', {}, title),
    h('div', { class: 'canvas' }, canvas),
  );
  // Chart.js measures its parent, so it is created once the box is in the document.
  requestAnimationFrame(() => {
    if (!canvas.isConnected || typeof window.Chart !== 'function') return;
    charts.push(
      new window.Chart(canvas, {
        type,
        data: {
          labels,
          datasets: [
            {
              label: title,
              data: values,
              backgroundColor: '#2446c7',
              borderColor: '#2446c7',
              tension: 0, // straight segments: a curve would draw values between days that never happened
            },
          ],
        },
        options: {
          responsive: true,
          maintainAspectRatio: false,
          animation: false,
          plugins: { legend: { display: false } },
          scales: { y: { beginAtZero: true } },
        },
      }),
    );
  });
  return box;
}

function recentTable(rows, names) {
  if (rows.length === 0) return stateBox('No requests in this range.');
  return h(
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
            'Time',
            'Key',
            'Endpoint',
            'Model',
            'Status',
            'Input',
            'Output',
            'Cost',
            'Latency',
          ].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h(
            'tr',
            {},
            h('td', {}, fmtDate(r.created_at)),
            h('td', {}, names.get(r.key_id) ?? r.key_id ?? '—'),
            h('td', { class: 'mono' }, r.endpoint),
            h('td', { class: 'mono' }, r.model ?? r.model_requested ?? '—'),
            h(
              'td',
              {},
              h(
                'span',
                { class: `badge ${r.status < 400 ? 'active' : 'revoked'}` },
                String(r.status),
              ),
            ),
            h('td', {}, fmtInt(r.input_tokens)),
            h('td', {}, fmtInt(r.output_tokens)),
            h('td', {}, fmtUsd(r.cost_usd)),
            h('td', {}, r.latency_ms === null ? '—' : `${r.latency_ms} ms`),
          ),
        ),
      ),
    ),
  );
}

/**
 * Every ledger row of the range up to now as a CSV download, built by the server
 * (`/usage/export` streams each row of the filter once, newest included, however many).
 */
async function exportCsv(rangeMs, scope) {
  const from = new Date(Date.now() - rangeMs).toISOString();
  const q = [`format=csv`, `from=${encodeURIComponent(from)}`, ...scope].filter(Boolean).join('&');
  let blob;
  try {
    const res = await fetch(`/admin/v1/usage/export?${q}`, { credentials: 'same-origin' });
    if (!res.ok) {
      const data = await res.json().catch(() => ({}));
      toast(data?.error?.message ?? `Export failed: HTTP ${res.status}`);
      return;
    }
    // A connection cut before the end (the server failed midway) rejects here.
    blob = await res.blob();
  } catch {
    toast('Export failed: the download was cut short. Try again.');
    return;
  }
  const a = h('a', {
    href: URL.createObjectURL(blob),
    download: `usage-${new Date().toISOString().slice(0, 10)}.csv`,
  });
  document.body.append(a);
  a.click();
  a.remove();
}
