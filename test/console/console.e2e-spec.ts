import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import OpenAI from 'openai';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { consoleSession } from '../support/console-session';
import { startGateway, TEST_KEY, testCatalog, type TestGateway } from '../support/gateway';
import { describeWithChromium, launchChromium } from './browser';
import { freshDataDir } from '../support/pglite';

const ADMIN_TOKEN = 'console-admin-token-0123456789';
const SESSION_SECRET = 'console-session-secret-0123456789abcdef';
const SYSTEM = { role: 'system' as const, content: 'You are a test double.' };

/** RFC 4180 CSV: quoted cells may hold commas, quotes ("") and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') {
        i++;
      }
      rows.push([...row, cell]);
      row = [];
      cell = '';
    } else {
      cell += c;
    }
  }
  rows.push([...row, cell]);
  return rows;
}

describeWithChromium('console in a real browser', () => {
  let gw: TestGateway;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every URL Chromium asked for, to prove nothing comes from outside the gateway. */
  const requested: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    [gw, browser] = await Promise.all([
      startGateway({
        CATALOG_PATH: testCatalog('http://127.0.0.1:9'),
        KEY_STORE: 'database',
        DATA_DIR: freshDataDir(),
        GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
        CONSOLE_SESSION_SECRET: SESSION_SECRET,
        USAGE_FLUSH_INTERVAL_MS: '50',
        REDIS_URL: '',
      }),
      launchChromium(),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.origin });
    context.on('request', (r) => requested.push(r.url()));
    page = await context.newPage();
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) {
        cspViolations.push(m.text());
      }
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await gw?.close();
  });

  const adminCall = async (method: string, path: string, body?: object): Promise<any> => {
    const res = await fetch(`${gw.origin}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return res.json();
  };

  it('signs in, creates and copies a key, sees its request in usage, revokes it, and the SDK gets 401', async () => {
    await page.goto(`${gw.origin}/console`);
    await page.waitForURL(/\/console\/login$/);
    await page.fill('#token', ADMIN_TOKEN);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:text("Keys")');

    await page.click('button:text("Create key")');
    await page.fill('#f-name', 'browser-key');
    await page.fill('#f-owner', 'team-a');
    await page.click('dialog button[type=submit]');
    const secret = (await page.textContent('#new-secret')) ?? '';
    expect(secret).toMatch(/^gw-/);
    await page.click('dialog .secret button:text("Copy")');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    expect(await page.textContent('dialog pre')).toContain(`${gw.origin}/v1/chat/completions`);
    // Every tab's snippet carries a system prompt: without one the gateway answers 400.
    for (const tab of await page.$$('dialog [role=tab]')) {
      await tab.click();
      const text = (await page.textContent('dialog pre')) ?? '';
      expect({ tab: await tab.textContent(), system: /system/.test(text) }).toEqual({
        tab: await tab.textContent(),
        system: true,
      });
      expect(text).toContain(secret);
    }
    await page.click('dialog button:text("Done")');
    await page.waitForSelector('tr:has-text("browser-key") .badge.active');

    const openai = new OpenAI({ baseURL: gw.baseURL, apiKey: secret, maxRetries: 0 });
    const reply = await openai.chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'Hello from the console test' }],
    });
    expect(reply.choices[0].message.content).toBeTruthy();

    await page.click('nav a:text("Usage")');
    // The ledger writes in the background (every 50 ms here): reload until the row shows.
    for (let i = 0; i < 40; i++) {
      if (await page.$('td.mono:text("local-echo-gpt")')) {
        break;
      }
      await page.waitForTimeout(250);
      // Expressions as strings: they run in Chromium, where the DOM types apply.
      await page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))');
      await page.waitForSelector('h1:text("Usage")');
    }
    await page.waitForSelector('td.mono:text("local-echo-gpt")');
    await page.waitForSelector('tr:has-text("browser-key")');
    await page.waitForFunction("document.querySelectorAll('canvas').length === 3");
    // The "copied" toast would cover the charts.
    await page.evaluate("document.getElementById('toast').classList.remove('show')");
    await page.waitForTimeout(300);
    // The README's picture is refreshed on demand only, so a test run leaves the tree clean.
    const shot = process.env.UPDATE_SCREENSHOT
      ? resolve(__dirname, '../../docs/console.png')
      : join(tmpdir(), 'gateway-console.png');
    await page.screenshot({ path: shot, fullPage: true });

    await page.click('nav a:text("Keys")');
    await page.click('tr:has-text("browser-key") button:text("Revoke")');
    await page.click('dialog button:text("Revoke key")');
    await page.waitForSelector('tr:has-text("browser-key") .badge.revoked');
    await expect(
      openai.chat.completions.create({
        model: 'local-echo-gpt',
        messages: [SYSTEM, { role: 'user', content: 'Still there?' }],
      }),
    ).rejects.toMatchObject({ status: 401 });
  }, 60_000);

  it('edits a key in the page: name, models and budget show in the table and in the API', async () => {
    const created = await adminCall('POST', '/keys', { name: 'editable-key', owner: 'team-e' });
    await page.click('nav a:text("Keys")');
    // Created behind the page's back: draw the table again.
    await page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))');
    await page.click('tr:has-text("editable-key") button:text("Edit")');
    await page.fill('#f-name', 'edited-key');
    await page.selectOption('#f-models', ['test-gpt', 'local-echo-gpt']);
    await page.fill('#f-budget', '2.5');
    await page.selectOption('#f-period', 'day');
    await page.click('dialog button:text("Save")');
    const row = 'tr:has-text("edited-key")';
    await page.waitForSelector(`${row} td.spend:text("$0.0000 / $2.50 per day")`);
    expect(await page.$('tr:has-text("editable-key")')).toBeNull();

    const stored = await adminCall('GET', `/keys/${created.id}`);
    expect(stored).toMatchObject({
      name: 'edited-key',
      owner: 'team-e',
      models: ['test-gpt', 'local-echo-gpt'],
      budget: { amount_usd: 2.5, period: 'day' },
      spend: { period: 'day', spent_usd: 0 },
    });
  });

  it('sets a team budget in the page and shows its spend and reservations; a member only reads it', async () => {
    await adminCall('POST', '/keys', { name: 'team-d-key', owner: 'team-d' });
    await page.click('nav a:text("Teams")');
    await page.click('button:text("Set team budget")');
    await page.fill('#t-team', 'team-d');
    await page.fill('#t-amount', '12.5');
    await page.selectOption('#t-period', 'month');
    await page.click('dialog button:text("Save")');
    const row = 'tr[data-team="team-d"]';
    await page.waitForSelector(`${row} td.spend:text("$12.50 per month")`);
    expect(await page.textContent(`${row} td.team-spent`)).toBe('$0.0000');
    expect(await page.textContent(`${row} td.team-reserved`)).toBe('$0.0000');
    expect(await adminCall('GET', '/teams/team-d/budget')).toMatchObject({
      budget: { amount_usd: 12.5, period: 'month' },
      spend: { spent_usd: 0, reserved_usd: 0, remaining_usd: 12.5 },
    });
    const member = await browser.newContext();
    try {
      const dora = await consoleSession(gw, {
        role: 'member',
        team: 'team-d',
        name: 'dora@example.com',
      });
      await member.addCookies([{ name: 'gw_console', value: dora.value, url: gw.origin }]);
      const p = await member.newPage();
      await p.goto(`${gw.origin}/console/#/teams`);
      await p.waitForSelector(`${row} td.spend:text("$12.50 per month")`);
      expect(await p.$('button:text("Set team budget")')).toBeNull();
      expect(await p.$(`${row} button:text("Edit")`)).toBeNull();
    } finally {
      await member.close();
    }
  });

  it('exports the usage page as CSV: the request made is in it, and no content', async () => {
    const { key } = (await adminCall('POST', '/keys', { name: 'csv-key' })) as { key: string };
    const requestId = `csv-export-${Date.now()}`;
    await new OpenAI({ baseURL: gw.baseURL, apiKey: key, maxRetries: 0 }).chat.completions.create(
      {
        model: 'local-echo-gpt',
        messages: [SYSTEM, { role: 'user', content: 'secret prompt text' }],
      },
      { headers: { 'x-request-id': requestId } },
    );
    for (let i = 0; i < 40; i++) {
      const rows = (await adminCall('GET', '/usage/requests?limit=5')) as {
        data: { request_id: string }[];
      };
      if (rows.data.some((r) => r.request_id === requestId)) {
        break;
      }
      await page.waitForTimeout(100);
    }
    await page.click('nav a:text("Usage")');
    await page.waitForSelector('h2:text("Recent requests")');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('button:text("Export CSV")'),
    ]);
    expect(download.suggestedFilename()).toMatch(/^usage-\d{4}-\d\d-\d\d\.csv$/);
    const text = readFileSync((await download.path()) ?? '', 'utf8');
    const [header, ...rows] = parseCsv(text);
    expect(header).toEqual([
      'created_at',
      'request_id',
      'key_id',
      'team',
      'endpoint',
      'model_requested',
      'model',
      'provider',
      'status',
      'outcome',
      'stream',
      'input_tokens',
      'cached_input_tokens',
      'output_tokens',
      'reasoning_tokens',
      'cost_usd',
      'latency_ms',
      'error_code',
    ]);
    const row = rows.find((r) => r[1] === requestId);
    expect(row).toBeDefined();
    const cell = (name: string): string | undefined => row?.[header.indexOf(name)];
    expect([cell('endpoint'), cell('model'), cell('status'), cell('outcome')]).toEqual([
      'chat_completions',
      'local-echo-gpt',
      '200',
      'completed',
    ]);
    expect(rows.every((r) => r.length === header.length)).toBe(true);
    expect(text).not.toContain('secret prompt text');
    expect(text).not.toContain('test double');
  });

  it('rotates a key in the page: the new secret works, the old one gets 401', async () => {
    await page.click('nav a:text("Keys")');
    await page.click('button:text("Create key")');
    await page.fill('#f-name', 'rotating-key');
    await page.click('dialog button[type=submit]');
    const before = (await page.textContent('#new-secret')) ?? '';
    await page.click('dialog button:text("Done")');
    await page.click('tr:has-text("rotating-key") button:text("Rotate")');
    await page.click('dialog button:text("Rotate")');
    const after = (await page.textContent('#new-secret')) ?? '';
    await page.click('dialog button:text("Done")');
    expect(after).toMatch(/^gw-/);
    expect(after).not.toBe(before);
    const call = (apiKey: string): Promise<unknown> =>
      new OpenAI({ baseURL: gw.baseURL, apiKey, maxRetries: 0 }).models.list();
    await expect(call(after)).resolves.toBeDefined();
    await expect(call(before)).rejects.toMatchObject({ status: 401 });
  });

  it('lists every catalog model, saying which providers are not configured, while /v1 serves only callable ones', async () => {
    await page.click('nav a:text("Models")');
    await page.waitForSelector('td.mono:text("local-echo-gpt")');
    expect(await page.textContent('main')).toContain('TEST_UNSET_KEY_VARIABLE');
    expect(await page.textContent('tr[data-model="no-key-model"] td.configured')).toBe(
      'no set TEST_UNSET_KEY_VARIABLE',
    );
    expect(await page.textContent('tr[data-model="test-gpt"] td.configured')).toBe('yes');

    const api = (await (
      await fetch(`${gw.origin}/admin/v1/models`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      })
    ).json()) as { data: { id: string; provider_configured: boolean }[] };
    expect(api.data.map((m) => [m.id, m.provider_configured])).toEqual([
      ['test-gpt', true],
      ['test-vllm', true],
      ['messages-only', true],
      ['no-key-model', false],
      ['local-echo-gpt', true],
      ['local-echo-claude', true],
    ]);
    const callable = await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 0,
    }).models.list();
    expect(callable.data.map((m) => m.id)).not.toContain('no-key-model');
    expect(callable.data.map((m) => m.id)).toContain('test-gpt');
  });

  it('names the static key in the keys table and in usage, not "(unnamed)" nor its hex id', async () => {
    await new OpenAI({
      baseURL: gw.baseURL,
      apiKey: TEST_KEY,
      maxRetries: 0,
    }).chat.completions.create({
      model: 'local-echo-gpt',
      messages: [SYSTEM, { role: 'user', content: 'static key call' }],
    });
    const id = ((await adminCall('GET', '/keys')).data as { type: string; id: string }[]).find(
      (k) => k.type === 'static',
    )!.id;
    await page.click('nav a:text("Keys")');
    await page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))');
    await page.waitForSelector('tr:has-text("GATEWAY_API_KEYS #1") td:text("static key")');
    expect(await page.$('td:text-is("(unnamed)")')).toBeNull();
    await page.click('nav a:text("Usage")');
    for (let i = 0; i < 40 && !(await page.$('td:text-is("GATEWAY_API_KEYS #1")')); i++) {
      await page.waitForTimeout(250); // the ledger writes every 50 ms here
      await page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))');
      await page.waitForSelector('h1:text("Usage")');
    }
    await page.waitForSelector('td:text-is("GATEWAY_API_KEYS #1")');
    expect(await page.$(`td:text-is("${id}")`)).toBeNull();
  });

  it('fits the keys and models tables in a 1440 px window: every action visible, no sideways scroll', async () => {
    // Keys as wide as real ones get: long names and teams, budgets, expiry, a model list.
    for (const n of [1, 2]) {
      await adminCall('POST', '/keys', {
        name: `search-indexing-production-batch-${n}`,
        owner: 'platform-search-and-recommendations',
        models: ['test-gpt', 'local-echo-gpt', 'local-echo-claude'],
        budget: { amount_usd: 1250.5, period: 'month' },
        expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString(),
      });
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      for (const name of ['Keys', 'Models']) {
        await page.click(`nav a:text("${name}")`);
        await page.evaluate('window.dispatchEvent(new HashChangeEvent("hashchange"))');
        await page.waitForSelector(`h1:text("${name}")`);
        await page.waitForSelector('.table-wrap table tbody tr');
        await page.screenshot({ path: join(tmpdir(), `gateway-console-1440-${name}.png`) });
        const fit = await page.evaluate<{ scroll: number; client: number; page: number }>(
          `(() => { const w = document.querySelector('.table-wrap');
            return { scroll: w.scrollWidth, client: w.clientWidth,
                     page: document.documentElement.scrollWidth - window.innerWidth }; })()`,
        );
        expect({ name, tableScrolls: fit.scroll > fit.client, pageScrolls: fit.page > 0 }).toEqual({
          name,
          tableScrolls: false,
          pageScrolls: false,
        });
      }
      await page.click('nav a:text("Keys")');
      await page.waitForSelector('tr:has-text("search-indexing-production-batch-2") button');
      const buttons = await page.$$('td.actions button');
      expect(buttons.length).toBeGreaterThanOrEqual(6); // Edit, Rotate, Revoke of both keys
      const wrap = (await (await page.$('.table-wrap'))!.boundingBox())!;
      for (const b of buttons) {
        const box = (await b.boundingBox())!;
        const label = await b.textContent();
        expect({
          label,
          inside: box.x >= wrap.x && box.x + box.width <= wrap.x + wrap.width,
        }).toEqual({
          label,
          inside: true,
        });
        expect({ label, inViewport: box.x + box.width <= 1440 }).toEqual({
          label,
          inViewport: true,
        });
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('stays readable on a narrow screen: nothing but the tables scrolls sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const name of ['Keys', 'Usage', 'Models']) {
        await page.click(`nav a:text("${name}")`);
        await page.waitForSelector(`h1:text("${name}")`);
        await page.waitForSelector('p.state:text("Loading")', { state: 'detached' });
        expect({
          name,
          fits: await page.evaluate<boolean>(
            'document.documentElement.scrollWidth <= window.innerWidth',
          ),
        }).toEqual({ name, fits: true });
      }
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('refuses a state-changing admin call from the page without the CSRF token', async () => {
    const statuses = await page.evaluate(async () => {
      const post = (headers: Record<string, string>): Promise<number> =>
        fetch('/admin/v1/keys', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: JSON.stringify({ name: 'forged' }),
        }).then((r) => r.status);
      const session = (await (await fetch('/console/session.json')).json()) as { csrf: string };
      return [
        await post({}),
        await post({ 'x-csrf-token': 'wrong' }),
        await post({ 'x-csrf-token': session.csrf }),
      ];
    });
    expect(statuses).toEqual([403, 403, 201]);
  });

  it('shows a member only their own team', async () => {
    const admin = (path: string, body: object): Promise<Response> =>
      fetch(`${gw.origin}/admin/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const other = (await (
      await admin('/keys', { name: 'team-b-secret-key', owner: 'team-b' })
    ).json()) as { id: string };
    await admin('/keys', { name: 'team-c-own-key', owner: 'team-c' });
    const member = await browser.newContext();
    try {
      const carol = await consoleSession(gw, {
        role: 'member',
        team: 'team-c',
        name: 'carol@example.com',
      });
      await member.addCookies([{ name: 'gw_console', value: carol.value, url: gw.origin }]);
      const p = await member.newPage();
      await p.goto(`${gw.origin}/console/`);
      await p.waitForSelector('tr:has-text("team-c-own-key")');
      expect(await p.$('tr:has-text("team-b-secret-key")')).toBeNull();
      expect(await p.$('tr:has-text("browser-key")')).toBeNull();
      const direct = await p.evaluate(
        (id) => fetch(`/admin/v1/keys/${id}`).then((r) => r.status),
        other.id,
      );
      expect(direct).toBe(404);
    } finally {
      await member.close();
    }
  });

  it('shows the audit log: what was done to keys, filtered by action, and the signed-in sessions', async () => {
    await page.goto(`${gw.origin}/console/#/audit`);
    await page.waitForSelector('#audit tr:has-text("key.revoke")');
    const actions = await page.$$eval('#audit tbody tr td:nth-child(3)', (tds) =>
      tds.map((td) => td.textContent),
    );
    expect(actions).toEqual(expect.arrayContaining(['key.create', 'key.update', 'key.rotate']));
    expect(await page.textContent('#audit')).not.toContain('gw-');
    await page.selectOption('select[aria-label=Action]', 'key.revoke');
    await page.waitForFunction(
      "[...document.querySelectorAll('#audit tbody tr td:nth-child(3)')].every((td) => td.textContent === 'key.revoke')",
    );
    await page.waitForSelector('#sessions tr:has-text("admin token")');
    expect(await page.getAttribute('a:text("Export CSV")', 'href')).toBe(
      '/admin/v1/audit/export?format=csv&action=key.revoke',
    );
  });

  it('loaded nothing from outside the gateway and broke no CSP rule', () => {
    expect(requested.length).toBeGreaterThan(5);
    const outside = requested.filter(
      (u) => !u.startsWith(`${gw.origin}/`) && !u.startsWith('data:') && !u.startsWith('blob:'),
    );
    expect(outside).toEqual([]);
    expect(requested).toContain(`${gw.origin}/console/assets/chart.umd.min.js`);
    expect(cspViolations).toEqual([]);
  });
});
