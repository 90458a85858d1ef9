// Teams: the budget each team's keys share, with what it has spent and holds reserved.
import {
  api,
  confirmAction,
  fmtDate,
  fmtUsd,
  getSession,
  h,
  modal,
  stateBox,
  toast,
} from './ui.js';

const PERIOD_TEXT = { day: 'per day', month: 'per month', total: 'in total' };

export async function teamsPage() {
  const session = getSession();
  const admin = session.role === 'admin';
  const { data } = await api('GET', '/teams');
  const rows = data.map((t) => teamRow(t, admin));
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
          ...['Team', 'Budget', 'Spent', 'Reserved', 'Left', 'Resets', ''].map((t) =>
            h('th', { scope: 'col' }, t),
          ),
        ),
      ),
      h('tbody', {}, ...rows),
    ),
  );
  table.hidden = rows.length === 0;
  const empty = stateBox(
    admin
      ? 'No team budgets yet. A team budget caps what all keys of a team spend together, on top of their own budgets.'
      : `Your team (${session.team}) has no team budget.`,
  );
  empty.hidden = rows.length !== 0;
  return [
    h('h1', {}, 'Teams'),
    h(
      'p',
      { class: 'hint' },
      'Requests reserve their worst-case cost against the team budget while they run and are charged their real cost when they end: a request that would not fit is refused before it reaches a model.',
    ),
    admin
      ? h(
          'div',
          { class: 'toolbar' },
          h(
            'button',
            { type: 'button', class: 'primary', onclick: () => void editBudget(undefined) },
            'Set team budget',
          ),
        )
      : null,
    table,
    empty,
  ];
}

function teamRow(t, admin) {
  const amount = Number(t.budget.amount_usd);
  const spent = Number(t.spend.spent_usd);
  const reserved = Number(t.spend.reserved_usd);
  const fill = h('span');
  // Width through the CSSOM: the CSP forbids style attributes.
  fill.style.width = `${amount ? Math.min(100, ((spent + reserved) / amount) * 100) : 100}%`;
  return h(
    'tr',
    { 'data-team': t.team },
    h('td', {}, t.team),
    h(
      'td',
      { class: 'spend' },
      `${fmtUsd(amount)} ${PERIOD_TEXT[t.budget.period] ?? ''}`,
      h(
        'div',
        { class: `bar ${spent + reserved >= amount ? 'over' : ''}`, role: 'presentation' },
        fill,
      ),
    ),
    h('td', { class: 'team-spent' }, fmtUsd(spent)),
    h('td', { class: 'team-reserved' }, fmtUsd(reserved)),
    h('td', {}, fmtUsd(Number(t.spend.remaining_usd))),
    h('td', {}, t.spend.resets_at ? fmtDate(t.spend.resets_at) : 'never'),
    h(
      'td',
      { class: 'actions' },
      admin
        ? [
            h(
              'button',
              { type: 'button', onclick: () => void editBudget(t), 'aria-label': `Edit ${t.team}` },
              'Edit',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: () => void removeBudget(t),
                'aria-label': `Remove the budget of ${t.team}`,
              },
              'Remove',
            ),
          ]
        : [],
    ),
  );
}

async function editBudget(t) {
  const result = await modal(t ? `Budget of ${t.team}` : 'Set team budget', (close) => {
    const error = h('p', { class: 'error', role: 'alert' });
    const team = h('input', {
      id: 't-team',
      required: true,
      maxlength: 200,
      value: t?.team ?? '',
      disabled: t !== undefined,
    });
    const amount = h('input', {
      id: 't-amount',
      type: 'number',
      required: true,
      min: 0,
      step: '0.01',
      value: t?.budget.amount_usd ?? '',
    });
    const period = h(
      'select',
      { id: 't-period' },
      ...['month', 'day', 'total'].map((p) =>
        h('option', { value: p, selected: t?.budget.period === p }, p),
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
        field('Team', team, 'The team name set as the owner of its keys.'),
        field('Budget (USD)', amount),
        field('Budget period', period),
      ),
      error,
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', onclick: () => close(undefined) }, 'Cancel'),
        h('button', { type: 'submit', class: 'primary' }, 'Save'),
      ),
    );
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (team.value.trim() === '' || amount.value === '') {
        error.textContent = 'Name the team and its budget.';
        return;
      }
      close({
        team: team.value.trim(),
        body: { amount_usd: Number(amount.value), period: period.value },
      });
    });
    return form;
  });
  if (!result) return;
  try {
    await api('PUT', `/teams/${encodeURIComponent(result.team)}/budget`, result.body);
    toast('Team budget saved');
  } catch (e) {
    toast(`Could not save the team budget: ${e.message}`);
  }
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}

async function removeBudget(t) {
  if (
    !(await confirmAction(
      'Remove team budget',
      `The keys of “${t.team}” will be limited by their own budgets only.`,
      'Remove',
    ))
  )
    return;
  try {
    await api('DELETE', `/teams/${encodeURIComponent(t.team)}/budget`);
    toast('Team budget removed');
  } catch (e) {
    toast(`Could not remove the team budget: ${e.message}`);
  }
  window.dispatchEvent(new HashChangeEvent('hashchange'));
}
