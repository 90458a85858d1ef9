import { BedrockSigner } from './bedrock-signer';

const URL_ = new URL('https://bedrock-runtime.us-west-2.amazonaws.com/model/a.b%3A0/converse');

describe('BedrockSigner', () => {
  it('signs for the catalog region and the bedrock service, host signed but not sent', async () => {
    const signer = new BedrockSigner('us-west-2', 'aws', {
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken: 'session-token-1',
    });
    const headers = await signer.sign(URL_, { 'content-type': 'application/json' }, '{}');
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-security-token']).toBe('session-token-1');
    expect(headers.host).toBeUndefined();
  });

  it('turns missing credentials into a 502 upstream_auth_failed', async () => {
    const signer = new BedrockSigner('us-west-2', 'aws', () =>
      Promise.reject(new Error('Could not load credentials from any providers')),
    );
    await expect(signer.sign(URL_, {}, '{}')).rejects.toMatchObject({
      status: 502,
      code: 'upstream_auth_failed',
    });
  });
});
