import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';

/** One request the endpoint answered. */
type SecretsRequest = { readonly target: string | undefined; readonly secretId: unknown };

/**
 * A local HTTP endpoint that speaks the part of the Secrets Manager API Boomerang uses: the JSON 1.1
 * protocol (`POST /`, `X-Amz-Target: secretsmanager.GetSecretValue`, a JSON body with `SecretId`).
 * The real SDK talks to it through `clientConfig`: a custom endpoint, a region and dummy credentials.
 */
class SecretsEndpoint {
  public readonly requests: SecretsRequest[] = [];
  private readonly secrets = new Map<string, string>();

  private constructor(private readonly server: ReturnType<typeof createServer>) {}

  public static async start(): Promise<SecretsEndpoint> {
    let endpoint: SecretsEndpoint | undefined;
    const server = createServer((req, res) => void endpoint?.answer(req, res));
    endpoint = new SecretsEndpoint(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  /** What the SDK client needs to talk to this endpoint (never to AWS). */
  public get clientConfig(): SecretsManagerClientConfig {
    const { port } = this.server.address() as AddressInfo;
    return {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'eu-west-1',
      credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'test-secret-key' },
      maxAttempts: 1,
    };
  }

  /** Sets (or replaces: a rotation) the value of a secret. */
  public put(secretId: string, value: string): void {
    this.secrets.set(secretId, value);
  }

  public async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const target = req.headers['x-amz-target'] as string | undefined;
    const secretId = (JSON.parse(body || '{}') as { SecretId?: unknown }).SecretId;
    this.requests.push({ target, secretId });
    if (req.method !== 'POST' || target !== 'secretsmanager.GetSecretValue') {
      return reply(res, 400, { __type: 'UnknownOperationException', message: `not served here: ${String(target)}` });
    }
    const value = typeof secretId === 'string' ? this.secrets.get(secretId) : undefined;
    if (value === undefined) {
      return reply(res, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
    }
    reply(res, 200, {
      ARN: `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${String(secretId)}-AbCdEf`,
      Name: secretId,
      SecretString: value,
      VersionId: 'v1',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_700_000_000,
    });
  }
}

function reply(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const type = typeof body.__type === 'string' ? { 'x-amzn-errortype': body.__type } : {};
  res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', ...type });
  res.end(JSON.stringify(body));
}

export { SecretsEndpoint };
