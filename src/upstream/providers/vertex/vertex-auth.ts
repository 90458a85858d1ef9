import { readFileSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import type { AuthClient } from 'google-auth-library';
import { UpstreamHttpError } from '../../../common/errors/gateway-errors';

/** The scope Vertex AI's prediction calls need. */
export const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';
/**
 * The token endpoint google-auth-library (v10 and v11) posts the service-account grant to, and
 * signs as the JWT's audience, whatever the key file's `token_uri` says.
 */
const LIBRARY_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const logger = new Logger('VertexAuth');

/** Bearer tokens for Vertex AI calls. */
export interface AccessTokens {
  /** A valid token: cached until shortly before it expires, fetched once for concurrent callers. */
  token(): Promise<string>;
  /** Drops the cached token (Vertex answered 401): the next `token()` fetches a new one. */
  invalidate(): void;
}

/** Access tokens are bearer credentials: no log line quotes one or a signed assertion. */
function scrub(text: string): string {
  return text
    .replace(/ya29\.[\w.-]+/g, '[token]')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]*/g, '[jwt]')
    .slice(0, 300);
}

interface KeyFile {
  type?: string;
  client_email?: string;
  private_key?: string;
  private_key_id?: string;
  token_uri?: string;
}

/**
 * Tokens through `google-auth-library`: from the file `GOOGLE_APPLICATION_CREDENTIALS`
 * names (a service account's JWT-bearer grant at the file's `token_uri`; other file
 * types as the library reads them), else from the metadata server (GKE Workload
 * Identity, GCE), whose address the library takes from `GCE_METADATA_HOST`. The
 * library caches a token until five minutes before it expires.
 */
export class GoogleAccessTokens implements AccessTokens {
  private client: Promise<AuthClient> | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly providerName: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  token(): Promise<string> {
    this.pending ??= this.fetch().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  invalidate(): void {
    void this.client?.then(
      (client) => {
        // Expired, refresh marker kept: the library's JWT and metadata clients fetch anew
        // (their gtoken cache included) on the next call.
        client.credentials = { ...client.credentials, access_token: undefined, expiry_date: 1 };
      },
      () => undefined,
    );
  }

  private async fetch(): Promise<string> {
    try {
      // A client that could not be made (a key file not mounted yet, or mid-rotation) is not
      // kept: the next request tries again instead of failing until a restart.
      this.client ??= this.createClient().catch((e: unknown) => {
        this.client = undefined;
        throw e;
      });
      const { token } = await (await this.client).getAccessToken();
      if (!token) {
        throw new Error('the credential source returned no access token');
      }
      return token;
    } catch (e) {
      if (e instanceof UpstreamHttpError) {
        throw e;
      }
      logger.warn(
        `provider '${this.providerName}': no Google access token (${scrub(String((e as Error).message ?? e))})`,
      );
      throw new UpstreamHttpError(
        502,
        'server',
        `The gateway could not obtain Google credentials for the upstream provider '${this.providerName}'.`,
        { code: 'upstream_auth_failed' },
      );
    }
  }

  private async createClient(): Promise<AuthClient> {
    /* eslint-disable-next-line @typescript-eslint/no-require-imports */
    const google = require('google-auth-library') as typeof import('google-auth-library');
    const path = this.env.GOOGLE_APPLICATION_CREDENTIALS;
    if (path === undefined || path === '') {
      return new google.Compute({ scopes: [CLOUD_PLATFORM] });
    }
    const file = JSON.parse(readFileSync(path, 'utf8')) as KeyFile;
    if (file.type !== 'service_account') {
      // Workload identity federation, user credentials: the library honours their URLs.
      return new google.GoogleAuth({ keyFile: path, scopes: [CLOUD_PLATFORM] }).getClient();
    }
    const tokenUri = file.token_uri ?? LIBRARY_TOKEN_URL;
    const client = new google.JWT({
      email: file.client_email,
      key: file.private_key,
      keyId: file.private_key_id,
      scopes: [CLOUD_PLATFORM],
      // The assertion is for the endpoint it is sent to.
      additionalClaims: { aud: tokenUri },
    });
    if (tokenUri !== LIBRARY_TOKEN_URL) {
      // The library posts to Google's endpoint whatever the file says: the file wins.
      client.transporter.interceptors.request.add({
        resolved: (options) => {
          if (String(options.url) === LIBRARY_TOKEN_URL) {
            options.url = new URL(tokenUri);
          }
          return Promise.resolve(options);
        },
      });
    }
    return client;
  }
}
