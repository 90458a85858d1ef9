// Audit: who did what, newest first, filtered and paged by the server's cursor; CSV or
// JSON Lines export with the same filters; for admins, the live console sessions.
import { api, confirmAction, fmtDate, getSession, h, stateBox, toast } from './ui.js';

const ACTIONS = [
  ['', 'All actions'],
  ['key.', 'Keys (all)'],
  ['key.create', 'Key created'],
  ['key.update', 'Key changed'],
  ['key.rotate', 'Key rotated'],
  ['key.revoke', 'Key revoked'],
  ['console.', 'Console (all)'],
  ['console.sign_in', 'Signed in'],
  ['console.sign_in_failed', 'Failed sign-in'],
  ['console.sign_out', 'Signed out'],
  ['console.session_end', 'Session ended by an admin'],
  ['console.role_change', 'Role changed'],
];
const state = { action: '', actor: '', target: '', team: '', from: '', to: '' };

function query() {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(state)) {
    if (v === '') continue;
    // Dates from the pickers are local days; the API takes RFC 3339 times.
    q.set(k, k === 'from' || k === 'to' ? new Date(`${v}T00:00:00`).toISOString() : v);
  }
  return q.toString();
}

/** What changed, in one line: `field: from → to` for updates, else the facts given. */
function summary(change) {
  if (!change) return '';
  return Object.entries(change)
    .map(([k, v]) =>
      v && typeof v === 'object' && 'from' in v && 'to' in v
        ? `${k}: ${JSON.stringify(v.from)} → ${JSON.stringify(v.to)}`
        : `${k}: ${JSON.stringify(v)}`,
    )
    .join('; ');
}

function row(e) {
  return h(
    'tr',
    {},
    h('td', {}, fmtDate(e.at)),
    h('td', { title: e.actor.id ?? '' }, e.actor.name ?? e.actor.kind),
    h('td', { class: 'mono' }, e.action),
    h('td', { class: 'mono' }, e.target ? e.target.id : '—'),
    h('td', {}, e.team ?? '—'),
    h('td', { class: 'mono' }, e.client ?? '—'),
    h(
      'td',
      {},
      h('span', { class: `badge ${e.outcome === 'success' ? 'active' : 'revoked'}` }, e.outcome),
    ),
    h('td', { class: 'change' }, summary(e.change)),
  );
}

function field(label, key, type = 'text') {
  return h('input', {
    type,
    value: state[key],
    placeholder: label,
    'aria-label': label,
    onchange: (ev) => {
      state[key] = ev.target.value.trim();
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    },
  });
}

async function sessionsSection() {
  const list = await api('GET', '/sessions');
  const body = h('tbody');
  for (const s of list.data) {
    const end = h('button', { type: 'button' }, 'End');
    end.addEventListener('click', async () => {
      if (!(await confirmAction('End session', `End every session of ${s.name}?`, 'End'))) return;
      await api('POST', '/sessions/end', { principal: s.principal });
      toast(`Signed ${s.name} out everywhere.`);
      window.dispatchEvent(new HashChangeEvent('hashchange'));
    });
    body.append(
      h(
        'tr',
        {},
        h('td', {}, s.name),
        h('td', {}, s.role === 'admin' ? 'admin' : s.team),
        h('td', {}, s.via),
        h('td', { class: 'mono' }, s.client ?? '—'),
        h('td', {}, fmtDate(s.last_seen_at)),
        h('td', {}, end),
      ),
    );
  }
  const head = ['Who', 'Role', 'Via', 'Address', 'Last seen', ''].map((t) =>
    h('th', { scope: 'col' }, t),
  );
  return [
    h('h2', {}, 'Signed-in sessions'),
    h(
      'div',
      { class: 'table-wrap' },
      h('table', { id: 'sessions' }, h('thead', {}, h('tr', {}, ...head)), body),
    ),
  ];
}

export async function auditPage() {
  const admin = getSession().role === 'admin';
  const action = h(
    'select',
    {
      'aria-label': 'Action',
      onchange: (ev) => {
        state.action = ev.target.value;
        window.dispatchEvent(new HashChangeEvent('hashchange'));
      },
    },
    ...ACTIONS.map(([v, t]) => h('option', { value: v, selected: v === state.action }, t)),
  );
  const q = query();
  const exportLink = (format, text) =>
    h(
      'a',
      {
        class: 'button',
        href: `/admin/v1/audit/export?format=${format}${q ? `&${q}` : ''}`,
        download: '',
      },
      text,
    );
  const out = [
    h('h1', {}, 'Audit'),
    h(
      'div',
      { class: 'toolbar' },
      action,
      field('Actor (name or id)', 'actor'),
      field('Target id', 'target'),
      admin ? field('Team', 'team') : null,
      field('From', 'from', 'date'),
      field('To', 'to', 'date'),
      exportLink('csv', 'Export CSV'),
      exportLink('jsonl', 'Export JSON Lines'),
    ),
  ];
  const body = h('tbody');
  const more = h('button', { type: 'button', hidden: true }, 'Load more');
  let cursor = null;
  const load = async () => {
    const page = await api(
      'GET',
      `/audit?limit=100${q ? `&${q}` : ''}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`,
    );
    body.append(...page.data.map(row));
    cursor = page.next_cursor;
    more.hidden = cursor === null;
    return page.data.length;
  };
  more.addEventListener('click', () => void load());
  const head = ['Time', 'Actor', 'Action', 'Target', 'Team', 'Address', 'Outcome', 'Change'].map(
    (t) => h('th', { scope: 'col' }, t),
  );
  if ((await load()) === 0) {
    out.push(stateBox(admin ? 'No audit entries match.' : 'No audit entries for your team match.'));
  } else {
    out.push(
      h(
        'div',
        { class: 'table-wrap' },
        h('table', { id: 'audit' }, h('thead', {}, h('tr', {}, ...head)), body),
      ),
      more,
    );
  }
  if (admin) out.push(...(await sessionsSection()));
  return out;
}
