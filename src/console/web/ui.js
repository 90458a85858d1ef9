// Small DOM helpers: every value goes in through textContent or attributes, never as
// HTML, so nothing a key name or a model id contains can run as script.

/** h('td', { class: 'x', onclick: fn }, child, 'text') */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'selected') el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

let session;
export function setSession(s) {
  session = s;
}
export function getSession() {
  return session;
}

/** A failed admin API call, with the envelope's message. */
export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the admin API with the session cookie and, when it changes state, the CSRF token. */
export async function api(method, path, body) {
  const headers = { accept: 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = session.csrf;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/admin/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    if (res.status === 401 || (res.status === 404 && data?.error?.code === 'route_not_found')) {
      // The session ended (expiry, restart without CONSOLE_SESSION_SECRET): sign in again.
      location.assign(`${session.console_path}/login`);
    }
    throw new ApiError(res.status, data?.error?.message ?? `HTTP ${res.status}`, data?.error?.code);
  }
  return data;
}

/** Every page of a cursor-paginated list, up to `max` rows. */
export async function all(path, max = 1000) {
  const rows = [];
  let after;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(
      'GET',
      `${path}${sep}limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`,
    );
    rows.push(...page.data);
    after = page.has_more ? page.next_cursor : undefined;
  } while (after && rows.length < max);
  return rows;
}

export function toast(message) {
  const el = document.getElementById('toast');
  el.textContent = message;
  el.classList.add('show');
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => el.classList.remove('show'), 2500);
}

export function stateBox(message, kind = '') {
  return h('p', { class: `state ${kind}`, role: kind === 'error' ? 'alert' : undefined }, message);
}

export const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
export const fmtUsd = (n) =>
  n === null || n === undefined ? '—' : `$${Number(n).toFixed(n < 1 ? 4 : 2)}`;
export const fmtInt = (n) => Number(n ?? 0).toLocaleString();

/** Opens a modal dialog built by `build(close)`; resolves with what close() is given. */
export function modal(title, build) {
  return new Promise((resolve) => {
    const dialog = h('dialog', { 'aria-label': title });
    const close = (value) => {
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      close(undefined);
    });
    dialog.append(h('h2', {}, title), build(close));
    document.body.append(dialog);
    dialog.showModal();
  });
}

/** Asks for confirmation; resolves true only on the confirming button. */
export function confirmAction(title, text, label) {
  return modal(title, (close) =>
    h(
      'div',
      {},
      h('p', {}, text),
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', onclick: () => close(false) }, 'Cancel'),
        h('button', { type: 'button', class: 'danger', onclick: () => close(true) }, label),
      ),
    ),
  );
}

/** Copies text; the clipboard API needs a secure context (localhost or TLS). */
export async function copy(text) {
  try {
    await navigator.clipboard.writeText(text);
    toast('Copied to the clipboard');
  } catch {
    toast('Copy failed: select the text and copy it by hand');
  }
}
