import type { BaseClient } from 'openid-client';
import { own } from '../common/own';
import type { ConsoleOidcConfig } from '../config/console.config';
import type { ConsoleRole } from './console-session';

/** What a sign-in in progress keeps between the redirect out and the callback. */
export interface PendingLogin {
  verifier: string;
  state: string;
  nonce: string;
  /** The console path to open once signed in. */
  returnTo: string;
}

/** Who the identity provider says signed in, mapped to a console role. */
export interface OidcIdentity {
  role: ConsoleRole;
  team: string | null;
  name: string;
  /** `oidc:<sub>`: stable across sign-ins, unlike the e-mail. */
  principal: string;
  /** What made this role: `claim:<name>`, `subject`, `email:<address>`, `group:<g>`, `team`. */
  grant: string;
}

/**
 * openid-client and jose, loaded on the first sign-in: ~120 modules a gateway without
 * single sign-on (or before anyone signs in) need not hold.
 */
function openid(): typeof import('openid-client') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('openid-client') as typeof import('openid-client');
}

/** A sign-in the console cannot accept (no team for a member, a bad callback). */
export class OidcSignInError extends Error {}

/**
 * Corporate sign-in: OpenID Connect authorization code with PKCE (S256), through
 * openid-client, which also checks state, nonce and the ID token's signature and claims.
 * The issuer is discovered on first use, so a provider that is down does not stop boot.
 */
export class ConsoleOidc {
  private client?: Promise<BaseClient>;

  constructor(private readonly config: ConsoleOidcConfig) {}

  /** The provider's authorization URL, and what the callback must check. */
  async start(
    redirectUri: string,
  ): Promise<{ url: string; pending: Omit<PendingLogin, 'returnTo'> }> {
    const client = await this.discover(redirectUri);
    const { generators } = openid();
    const pending = {
      verifier: generators.codeVerifier(),
      state: generators.state(),
      nonce: generators.nonce(),
    };
    const url = client.authorizationUrl({
      scope: this.config.scopes,
      redirect_uri: redirectUri,
      code_challenge: generators.codeChallenge(pending.verifier),
      code_challenge_method: 'S256',
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url, pending };
  }

  /** Exchanges the code (with the PKCE verifier) and maps the ID token's claims to a role. */
  async finish(
    redirectUri: string,
    callbackUrl: string,
    pending: Omit<PendingLogin, 'returnTo'>,
  ): Promise<OidcIdentity> {
    const client = await this.discover(redirectUri);
    const params = client.callbackParams(callbackUrl);
    const tokens = await client.callback(redirectUri, params, {
      code_verifier: pending.verifier,
      state: pending.state,
      nonce: pending.nonce,
    });
    return identify(tokens.claims(), this.config);
  }

  private discover(redirectUri: string): Promise<BaseClient> {
    this.client ??= openid()
      .Issuer.discover(this.config.issuer)
      .then(
        (issuer) =>
          new issuer.Client({
            client_id: this.config.clientId,
            client_secret: this.config.clientSecret,
            redirect_uris: [redirectUri],
            response_types: ['code'],
            token_endpoint_auth_method:
              this.config.clientSecret === undefined ? 'none' : 'client_secret_basic',
          }),
      );
    // A failed discovery is retried on the next sign-in rather than remembered.
    this.client.catch(() => (this.client = undefined));
    return this.client;
  }
}

const list = (v: unknown): string[] =>
  Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(/[,\s]+/) : [];

/**
 * Admin when the admin claim is true, the subject is listed, a verified e-mail is listed
 * (compared in lower case), or a group is listed; otherwise a member of the team the team
 * claim names (no team: refused). An e-mail the provider has not verified grants nothing:
 * many providers let a user type any address.
 */
export function identify(claims: Record<string, unknown>, config: ConsoleOidcConfig): OidcIdentity {
  const sub = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : undefined;
  if (sub === undefined) {
    throw new OidcSignInError('The identity provider sent an ID token without a subject.');
  }
  const email = typeof claims.email === 'string' ? claims.email.toLowerCase() : undefined;
  const verified = email !== undefined && claims.email_verified === true;
  const name = email ?? sub;
  const principal = `oidc:${sub}`;
  const groups = list(own(claims, config.groupsClaim));
  const grant =
    config.adminClaim !== undefined && own(claims, config.adminClaim) === true
      ? `claim:${config.adminClaim}`
      : config.adminSubjects.includes(sub)
        ? 'subject'
        : verified && config.adminEmails.includes(email)
          ? `email:${email}`
          : groups
              .filter((g) => config.adminGroups.includes(g))
              .map((g) => `group:${g}`)
              .at(0);
  if (grant !== undefined) {
    return { role: 'admin', team: null, name, principal, grant };
  }
  const team = own(claims, config.teamClaim);
  if (typeof team !== 'string' || team === '') {
    const unverified =
      email !== undefined && !verified && config.adminEmails.includes(email)
        ? ' (its e-mail is listed as an admin, but the identity provider has not verified it)'
        : '';
    throw new OidcSignInError(
      `Signed in as ${name}, but the identity has no '${config.teamClaim}' claim naming a team, and is not an admin${unverified}.`,
    );
  }
  return { role: 'member', team, name, principal, grant: 'team' };
}
