/** What the sign-in page shows. */
export interface LoginPageOptions {
  action: string;
  stylesheet: string;
  /** False: only the one-time link from the startup log signs in. */
  tokenConfigured: boolean;
  error?: string;
  /** A neutral message (a new link was printed). */
  notice?: string;
  /** Where to ask for a new one-time link, when sign-in is by link only. */
  linkAction?: string;
  /** The corporate sign-in link, when OpenID Connect is configured. */
  sso?: string;
}

const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The server-rendered sign-in page (no script: it works before any session exists). */
export function loginPage(o: LoginPageOptions): string {
  const error =
    o.error === undefined
      ? o.notice === undefined
        ? ''
        : `<p class="notice" role="status">${escape(o.notice)}</p>`
      : `<p class="error" role="alert">${escape(o.error)}</p>`;
  const relink =
    o.linkAction === undefined
      ? ''
      : `<form method="post" action="${escape(o.linkAction)}" class="stack">
        <p class="hint">Used the link already, or signed out? Ask for a new one: it is written
        to the gateway log, for whoever runs the gateway.</p>
        <button type="submit">Print a new sign-in link to the log</button>
      </form>`;
  const sso =
    o.sso === undefined
      ? ''
      : `<p><a class="button primary" href="${escape(o.sso)}">Sign in with your company account</a></p>`;
  const body = o.tokenConfigured
    ? `<form method="post" action="${escape(o.action)}" class="stack">
        <label for="token">Admin token</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
        <p class="hint">The value of <code>GATEWAY_ADMIN_TOKEN</code>.</p>
        <button type="submit" class="primary">Sign in</button>
      </form>`
    : o.sso !== undefined
      ? ''
      : `<p>No <code>GATEWAY_ADMIN_TOKEN</code> is configured. Open the one-time sign-in link
        the gateway printed in its startup log, or set <code>GATEWAY_ADMIN_TOKEN</code> and
        restart to sign in with it here.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Sign in · Gateway console</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="${escape(o.stylesheet)}">
</head>
<body class="login">
  <main class="card">
    <h1>Gateway console</h1>
    ${error}
    ${sso}
    ${body}
    ${relink}
  </main>
</body>
</html>
`;
}
