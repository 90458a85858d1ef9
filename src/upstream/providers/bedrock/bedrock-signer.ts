import { Logger } from '@nestjs/common';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';
import { UpstreamHttpError } from '../../../common/errors/gateway-errors';

/** Bedrock Runtime's SigV4 signing name. */
const SERVICE = 'bedrock';
const logger = new Logger('BedrockSigner');

/**
 * SigV4 for one Bedrock provider, with AWS's own libraries: `@smithy/signature-v4` signs,
 * and the Node credential chain of `@aws-sdk/credential-provider-node` resolves the
 * identity (environment keys, web identity token file as IRSA on EKS sets it, shared
 * files and SSO, container and instance metadata), cached by the chain and refreshed
 * before it expires. Both load with the first Bedrock provider: other deployments never
 * pay for them. The region signed is the catalog's, whatever `AWS_REGION` says.
 */
export class BedrockSigner {
  private readonly signer: SignatureV4;

  constructor(
    readonly region: string,
    private readonly providerName: string,
    credentials?: AwsCredentialIdentity | AwsCredentialIdentityProvider,
  ) {
    /* eslint-disable @typescript-eslint/no-require-imports */
    const { SignatureV4: Signer } =
      require('@smithy/signature-v4') as typeof import('@smithy/signature-v4');
    const { Hash } = require('@smithy/hash-node') as typeof import('@smithy/hash-node');
    const chain =
      credentials ??
      (
        require('@aws-sdk/credential-provider-node') as typeof import('@aws-sdk/credential-provider-node')
      ).defaultProvider();
    /* eslint-enable @typescript-eslint/no-require-imports */
    this.signer = new Signer({
      service: SERVICE,
      region,
      credentials: chain,
      sha256: Hash.bind(null, 'sha256'),
    });
  }

  /**
   * The headers to send for a POST of `body` to `url`: `headers` plus `x-amz-date`,
   * `authorization` and, for temporary credentials, `x-amz-security-token`. `host` is
   * signed but left to the HTTP client to send (it derives the same value from the URL).
   * No credentials: a 502 `upstream_auth_failed`, logged without any credential.
   */
  async sign(
    url: URL,
    headers: Record<string, string>,
    body: string,
  ): Promise<Record<string, string>> {
    let signed: { headers: Record<string, string> };
    try {
      signed = await this.signer.sign({
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: { ...headers, host: url.host },
        body,
      });
    } catch (e) {
      // The chain's messages name the sources it tried, never a credential.
      logger.warn(
        `provider '${this.providerName}': no AWS credentials could be resolved (${(e as Error).name}: ${(e as Error).message})`,
      );
      throw new UpstreamHttpError(
        502,
        'server',
        `The gateway has no usable AWS credentials for the upstream provider '${this.providerName}'.`,
        { code: 'upstream_auth_failed' },
      );
    }
    const out = { ...signed.headers };
    delete out.host;
    return out;
  }
}
