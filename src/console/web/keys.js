// Keys: the table, create / edit / rotate / revoke, and the secret shown once.
import {
  all,
  api,
  confirmAction,
  copy,
  fmtDate,
  fmtUsd,
  getSession,
  h,
  modal,
  stateBox,
  toast,
} from './ui.js';
import { keySnippets } from './snippets.js';

const ENDPOINTS = ['chat_completions', 'responses', 'messages'];
let models = [];

export async function keysPage() {
  const [keys, catalog] = await Promise.all([
    all('/keys'),
    api('GET', '/models')
      .then((m) => m.data)
      .catch(() => []),
  ]);
  models = catalog;
  const search = h('input', {
    type: 'search',
    class: 'grow',
    placeholder: 'Search name, team or key',
    'aria-label': 'Search keys',
  });
  const status = h(
    'select',
    { 'aria-label': 'Filter by status' },
    h('option', { value: '' }, 'All statuses'),
    ...['active', 'revoked', 'expired'].map((s) => h('option', { value: s }, s)),
  );
  const body = h('tbody');
  const table = h(
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
            'Name',
            'Key',
            'Team',
            'Created',
            'Last used',
            'Expires',
            'Status',
            'Spend / budget (budget period)',
            '',
          ].map((t) => h('th', { scope: 'col' }, t)),
        ),
      ),
      body,
    ),
  );
  const empty = stateBox('');
  const draw = () => {
    const q = search.value.trim().toLowerCase();
    const rows = keys.filter(
      (k) =>
        (!status.value || k.status === status.value) &&
        (!q ||
          [k.name, k.owner, k.key_hint, k.id].some(
            (v) => v && String(v).toLowerCase().includes(q),
          )),
    );
    body.replaceChildren(...rows.map(keyRow));
    table.hidden = rows.length === 0;
    empty.hidden = rows.length !== 0;
    empty.textContent =
      keys.length === 0
        ? 'No keys yet. Create one with “Create key”: its secret is shown once, with ready-to-paste snippets.'
        : 'No key matches this search or filter. Clear them to see every key.';
  };
  search.addEventListener('input', draw);
  status.addEventListener('change', draw);
  draw();
  return [
    h('h1', {}, 'Keys'),
    h(
      'div',
      { class: 'toolbar' },
      search,
      status,
      h(
        'button',
        { type: 'button', class: 'primary', onclick: () => void createKey() },
        'Create key',
      ),
    ),
    table,
    empty,
  ];
}

const PERIODS = { day: 'today', month: 'this month', total: 'in total' };

/** The key's spend in its budget's own period, as the server counts it for the budget. */
function spendCell(k) {
  if (!k.spend) return h('td', {}, '—');
  const budget = k.budget ? Number(k.budget.amount_usd) : null;
  const used = Number(k.spend.spent_usd);
  const share = budget ? Math.min(100, (used / budget) * 100) : 0;
  // Width through the CSSOM: the CSP forbids style attributes.
  const fill = h('span');
  fill.style.width = `${share}%`;
  return h(
    'td',
    {
      class: 'spend',
      title: k.spend.resets_at ? `Resets ${fmtDate(k.spend.resets_at)}` : 'Never resets',
    },
    budget === null
      ? `${fmtUsd(used)} ${PERIODS[k.spend.period] ?? ''} · no budget`
      : `${fmtUsd(used)} / ${fmtUsd(budget)} ${k.budget.period === 'total' ? 'in total' : `per ${k.budget.period}`}`,
    budget
      ? h('div', { class: `bar ${used >= budget ? 'over' : ''}`, role: 'presentation' }, fill)
      : null,
  );
}

function keyRow(k) {
  const managed = k.type === 'managed';
  const active = k.status === 'active';
  return h(
    'tr',
    { 'data-key-id': k.id },
    h('td', {}, k.name ?? '(unnamed)'),
    h('td', { class: 'mono' }, k.key_hint ?? (managed ? '—' : 'static key')),
    h('td', {}, k.owner ?? '—'),
    h('td', {}, fmtDate(k.created_at)),
    h('td', {}, fmtDate(k.last_used_at)),
    h('td', {}, k.expires_at ? fmtDate(k.expires_at) : 'never'),
    h('td', {}, h('span', { class: `badge ${k.status}` }, k.status)),
    spendCell(k),
    h(
      'td',
      { class: 'actions' },
      managed && active
        ? [
            h(
              'button',
              { type: 'button', onclick: () => void editKey(k), 'aria-label': `Edit ${k.name}` },
              'Edit',
            ),
            h(
              'button',
              {
                type: 'button',
                onclick: () => void rotateKey(k),
                'aria-label': `Rotate ${k.name}`,
              },
              'Rotate',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: () => void revokeKey(k),
                'aria-label': `Revoke ${k.name}`,
              },
              'Revoke',
            ),
          ]
        : managed
          ? []
          : h('span', { class: 'hint' }, 'read-only (configured in the environment)'),
    ),
  );
}

/** The key form: create when `key` is undefined, else edit. Resolves with the body to send. */
function keyForm(key) {
  const session = getSession();
  return modal(key ? `Edit ${key.name}` : 'Create key', (close) => {
    const error = h('p', { class: 'error', role: 'alert' });
    const name = h('input', {
      id: 'f-name',
      required: true,
      maxlength: 200,
      value: key?.name ?? '',
    });
    const owner = h('input', {
      id: 'f-owner',
      maxlength: 200,
      value: key?.owner ?? session.team ?? '',
      disabled: session.role === 'member',
    });
    const modelBox = h(
      'select',
      { id: 'f-models', multiple: true, size: Math.min(6, Math.max(2, models.length)) },
      ...models.map((m) =>
        h(
          'option',
          { value: m.id, selected: key?.models?.includes(m.id) },
          m.provider_configured ? m.id : `${m.id} (provider not configured)`,
        ),
      ),
    );
    const endpointChecks = ENDPOINTS.map((e) =>
      h('input', {
        type: 'checkbox',
        value: e,
        checked: !key?.endpoints || key.endpoints.includes(e),
      }),
    );
    const expires = h('input', {
      id: 'f-expires',
      type: 'date',
      value: key?.expires_at ? key.expires_at.slice(0, 10) : '',
    });
    const rpm = h('input', {
      id: 'f-rpm',
      type: 'number',
      min: 0,
      value: key?.limits?.requests_per_minute ?? '',
    });
    const tpm = h('input', {
      id: 'f-tpm',
      type: 'number',
      min: 0,
      value: key?.limits?.tokens_per_minute ?? '',
    });
    const budget = h('input', {
      id: 'f-budget',
      type: 'number',
      min: 0,
      step: '0.01',
      value: key?.budget?.amount_usd ?? '',
    });
    const period = h(
      'select',
      { id: 'f-period' },
      ...['month', 'day', 'total'].map((p) =>
        h('option', { value: p, selected: key?.budget?.period === p }, p),
      ),
    );
    const field = (label, input, hint) =>
      h(
        'div',
        { class: 'field' },
        h('label', { for: input.id }, label),
        input,
        hint ? h('p', { class: 'hint' }, hint) : null,
      );
    const form = h(
      'form',
      { class: 'stack' },
      h(
        'div',
        { class: 'grid' },
        field('Name', name),
        field(
          'Team',
          owner,
          session.role === 'member'
            ? 'Keys you create belong to your team.'
            : 'Members of this team will see the key.',
        ),
        field('Expires', expires, 'Empty: never.'),
        field('Requests per minute', rpm, 'Empty: the gateway default.'),
        field('Tokens per minute', tpm),
        field('Budget (USD)', budget, 'Empty: no budget.'),
        field('Budget period', period),
      ),
      field('Models allowed', modelBox, 'None selected: every model. Ctrl/⌘-click picks several.'),
      h(
        'fieldset',
        { class: 'checks' },
        h('legend', {}, 'Endpoints'),
        ...endpointChecks.map((c) => h('label', {}, c, ` ${c.value}`)),
      ),
      error,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', onclick: () => close(undefined) }, 'Cancel'),
        h('button', { type: 'submit', class: 'primary' }, key ? 'Save' : 'Create key'),
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const picked = [...modelBox.selectedOptions].map((o) => o.value);
      const eps = endpointChecks.filter((c) => c.checked).map((c) => c.value);
      if (eps.length === 0) {
        error.textContent = 'Pick at least one endpoint.';
        return;
      }
      const limits = {};
      if (rpm.value !== '') limits.requests_per_minute = Number(rpm.value);
      if (tpm.value !== '') limits.tokens_per_minute = Number(tpm.value);
      const body = {
        name: name.value.trim(),
        models: picked.length ? picked : null,
        endpoints: eps.length === ENDPOINTS.length ? null : eps,
        expires_at: expires.value ? new Date(`${expires.value}T23:59:59Z`).toISOString() : null,
        limits,
        budget:
          budget.value === '' ? null : { amount_usd: Number(budget.value), period: period.value },
      };
      if (session.role === 'admin') body.owner = owner.value.trim() || null;
      close({ body, showError: (m) => (error.textContent = m) });
    });
    return form;
  });
}

async function createKey() {
  const result = await keyForm(undefined);
  if (!result) return;
  try {
    const created = await api('POST', '/keys', result.body);
    await showSecret(created, 'Key created');
  } catch (e) {
    toast(`Could not create the key: ${e.message}`);
  }
  location.hash = '#/keys';
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

async function editKey(k) {
  const result = await keyForm(k);
  if (!result) return;
  try {
    await api('PATCH', `/keys/${encodeURIComponent(k.id)}`, result.body);
    toast('Key saved');
  } catch (e) {
    toast(`Could not save the key: ${e.message}`);
  }
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

async function rotateKey(k) {
  if (
    !(await confirmAction(
      'Rotate key',
      `A new secret replaces the current one of “${k.name}”, which stops working now. Clients must switch to the new secret.`,
      'Rotate',
    ))
  )
    return;
  try {
    const rotated = await api('POST', `/keys/${encodeURIComponent(k.id)}/rotate`, {
      grace_period_seconds: 0,
    });
    await showSecret(rotated, 'Key rotated');
  } catch (e) {
    toast(`Could not rotate the key: ${e.message}`);
  }
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

async function revokeKey(k) {
  if (
    !(await confirmAction(
      'Revoke key',
      `Requests with “${k.name}” (${k.key_hint}) will be refused from now on. This cannot be undone.`,
      'Revoke key',
    ))
  )
    return;
  try {
    await api('POST', `/keys/${encodeURIComponent(k.id)}/revoke`, {});
    toast('Key revoked');
  } catch (e) {
    toast(`Could not revoke the key: ${e.message}`);
  }
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

/** The secret, once, with a copy button and snippets for curl and both SDKs. */
function showSecret(key, title) {
  const origin = location.origin;
  const model = key.models?.find((m) => !m.includes('*')) ?? models[0]?.id ?? 'MODEL_ID';
  const snippets = keySnippets({ origin, key: key.key, model });
  return modal(title, (close) => {
    const pre = h('pre', {}, h('code', {}, snippets.curl));
    const tabs = Object.keys(snippets).map((name, i) =>
      h(
        'button',
        {
          type: 'button',
          role: 'tab',
          'aria-selected': String(i === 0),
          onclick: (e) => {
            for (const t of tabs) t.setAttribute('aria-selected', String(t === e.currentTarget));
            pre.firstChild.textContent = snippets[name];
          },
        },
        name,
      ),
    );
    return h(
      'div',
      {},
      h('p', {}, 'Copy this secret now: it is shown only once and cannot be recovered.'),
      h(
        'div',
        { class: 'secret' },
        h('code', { id: 'new-secret' }, key.key),
        h(
          'button',
          { type: 'button', class: 'primary', onclick: () => void copy(key.key) },
          'Copy',
        ),
      ),
      h('div', { class: 'tabs', role: 'tablist' }, ...tabs),
      pre,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', onclick: () => void copy(pre.textContent) }, 'Copy snippet'),
        h('button', { type: 'button', class: 'primary', onclick: () => close() }, 'Done'),
      ),
    );
  });
}
