// The console's entry point: reads the session, then renders one page per hash route.
import { h, setSession, stateBox } from './ui.js';
import { keysPage } from './keys.js';
import { usagePage } from './usage.js';
import { modelsPage } from './models.js';
import { auditPage } from './audit.js';
import { teamsPage } from './teams.js';

const PAGES = {
  keys: keysPage,
  teams: teamsPage,
  usage: usagePage,
  models: modelsPage,
  audit: auditPage,
};

async function render() {
  const name = location.hash.replace(/^#\//, '').split('?')[0] || 'keys';
  const page = PAGES[name] ?? PAGES.keys;
  for (const a of document.querySelectorAll('nav a')) {
    if (a.dataset.page === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const view = document.getElementById('view');
  view.replaceChildren(stateBox('Loading…'));
  try {
    view.replaceChildren(...(await page()));
  } catch (e) {
    view.replaceChildren(stateBox(`${e.message} Reload the page to try again.`, 'error'));
  }
}

async function start() {
  const res = await fetch('session.json', { credentials: 'same-origin' });
  if (res.status === 401) {
    // Back to this page (its hash route) after a corporate sign-in.
    location.assign(`login?return=${encodeURIComponent(location.pathname + location.hash)}`);
    return;
  }
  const session = await res.json();
  setSession(session);
  document.getElementById('who').textContent =
    session.role === 'admin' ? `${session.name} · admin` : `${session.name} · ${session.team}`;
  document.getElementById('logout-csrf').value = session.csrf;
  window.addEventListener('hashchange', () => void render());
  await render();
}

start().catch((e) => {
  document.getElementById('view').replaceChildren(h('p', { class: 'state error' }, String(e)));
});
