import type { ConfigService } from '@nestjs/config';
import type { CatalogService } from '../catalog/catalog.service';
import type { CatalogProvider } from '../catalog/catalog.types';
import { GatewayError } from '../common/errors/gateway-errors';
import type { AllConfig } from '../config';

/** What a secret is replaced with. */
export const REDACTED = '[redacted]';

/** Shorter values are not secrets worth the false positives (`true`, a version, ...). */
const MIN_SECRET_LENGTH = 8;
/** The shortest head of a secret removed from the end of cut text. */
const MIN_TAIL = 4;

/** The credential part of an `Authorization`-style value (`Bearer <token>`, `Basic <b64>`). */
const SCHEME = /^(?:bearer|basic|token)\s+(\S+)$/i;

/**
 * Secrets the gateway holds that upstream text must never carry to a client or a log:
 * each provider's key and every header value the gateway adds to its upstream requests
 * (with and without an auth scheme), the client keys, and the password of `REDIS_URL`.
 */
export function configuredSecrets(
  providers: Iterable<CatalogProvider>,
  config: Pick<AllConfig, 'auth' | 'limits'>,
): string[] {
  const out: string[] = [];
  for (const p of providers) {
    if (p.apiKey !== undefined) {
      out.push(p.apiKey);
    }
    for (const value of Object.values(p.headers)) {
      out.push(value, SCHEME.exec(value.trim())?.[1] ?? '');
    }
  }
  out.push(...config.auth.apiKeys, config.auth.devApiKey ?? '', config.auth.adminToken ?? '');
  const redis = config.limits.redisUrl;
  if (redis !== undefined) {
    try {
      out.push(decodeURIComponent(new URL(redis).password));
    } catch {
      // validated at boot; an unparsable URL has no password to hide
    }
  }
  return out;
}

/**
 * Removes configured secrets from upstream text before it reaches a client or a log.
 * Built once at boot; callers scan only error texts and error frames, so a healthy
 * answer costs nothing. A secret is also looked for as JSON escapes it, since upstream
 * error frames are relayed as JSON text. Registered in UpstreamModule by `fromConfig`.
 */
export class Redactor {
  /** Longest first, so that a secret containing another is replaced whole. */
  private readonly secrets: readonly string[];

  constructor(secrets: Iterable<string>) {
    const set = new Set<string>();
    for (const secret of secrets) {
      if (secret.length < MIN_SECRET_LENGTH) {
        continue;
      }
      set.add(secret);
      set.add(JSON.stringify(secret).slice(1, -1));
    }
    this.secrets = [...set].sort((a, b) => b.length - a.length);
  }

  /** The redactor of this deployment: every configured secret, read once at boot. */
  static fromConfig(config: ConfigService<AllConfig, true>, catalog: CatalogService): Redactor {
    return new Redactor(
      configuredSecrets(catalog.providers(), {
        auth: config.get('auth', { infer: true }),
        limits: config.get('limits', { infer: true }),
      }),
    );
  }

  /** The text with every secret replaced by `[redacted]`; the same string when none occurs. */
  redact(text: string): string {
    let out = text;
    for (const secret of this.secrets) {
      if (out.includes(secret)) {
        out = out.replaceAll(secret, REDACTED);
      }
    }
    return out;
  }

  /**
   * For text cut at a size limit: also replaces a tail that is the head of a secret (4
   * characters or more), which whole-secret matching cannot see.
   */
  redactCut(text: string): string {
    const out = this.redact(text);
    for (const secret of this.secrets) {
      for (let n = Math.min(secret.length - 1, out.length); n >= MIN_TAIL; n--) {
        if (out.endsWith(secret.slice(0, n))) {
          return out.slice(0, out.length - n) + REDACTED;
        }
      }
    }
    return out;
  }

  /**
   * The error with its message, param, code and stack redacted: the same object when it
   * quotes no secret, otherwise a copy of the same class with every other field kept.
   */
  redactError<E>(error: E): E | GatewayError {
    if (!(error instanceof GatewayError)) {
      return error;
    }
    const message = this.redact(error.message);
    const param = error.param === null ? null : this.redact(error.param);
    const code = error.code === null ? null : this.redact(error.code);
    if (message === error.message && param === error.param && code === error.code) {
      return error;
    }
    const copy = Object.create(Object.getPrototypeOf(error) as object) as GatewayError;
    const stack = error.stack === undefined ? undefined : this.redact(error.stack);
    return Object.assign(copy, error, { message, param, code, stack });
  }
}
