import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A handler as Lambda's Node runtime calls it. */
type LambdaHandler = (event: never, context: { getRemainingTimeInMillis(): number }) => Promise<unknown>;

/** Lambda's limit on a synchronous invocation's response payload. */
const MAX_RESPONSE_BYTES = 6 * 1024 * 1024;

/**
 * A local HTTP endpoint that speaks Lambda's Invoke REST call (`POST /2015-03-31/functions/{name}/invocations`)
 * and runs the real handler in this process, as the Node runtime would: a thrown error answers 200 with
 * `X-Amz-Function-Error: Unhandled` and `{ errorType, errorMessage, trace }`; a response over 6 MB is refused
 * as Lambda refuses it; an unknown function answers 404 `ResourceNotFoundException`. The SDK reaches it
 * through `AWS_ENDPOINT_URL_LAMBDA` (see {@link env}) with dummy credentials.
 */
class LocalLambda {
  /** The payload size (bytes) of every answer, in order. */
  public readonly responses: number[] = [];
  private readonly functions = new Map<string, LambdaHandler>();

  private constructor(private readonly server: ReturnType<typeof createServer>) {}

  public static async start(): Promise<LocalLambda> {
    let endpoint: LocalLambda | undefined;
    const server = createServer((req, res) => void endpoint?.answer(req, res));
    endpoint = new LocalLambda(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  /** Serves `handler` as the function `name` (also reachable by any ARN ending in `:function:<name>`). */
  public serve(name: string, handler: LambdaHandler): void {
    this.functions.set(name, handler);
  }

  /** The environment of an SDK client (the CLI) that invokes functions here, never AWS. */
  public get env(): Record<string, string> {
    const { port } = this.server.address() as AddressInfo;
    return {
      AWS_ENDPOINT_URL_LAMBDA: `http://127.0.0.1:${port}`,
      AWS_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'AKIDTEST',
      AWS_SECRET_ACCESS_KEY: 'test-secret-key',
      AWS_MAX_ATTEMPTS: '1',
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    };
  }

  public close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(req.url?.split('?')[0] ?? '');
    // A name, or an ARN (with or without a qualifier): the function's name either way.
    const name =
      match === null
        ? undefined
        : (decodeURIComponent(match[1] as string)
            .replace(/^arn:[^:]+:lambda:[^:]+:\d+:function:/, '')
            .split(':')[0] as string);
    const handler = name === undefined ? undefined : this.functions.get(name);
    if (req.method !== 'POST' || handler === undefined) {
      res.writeHead(404, { 'content-type': 'application/json', 'x-amzn-errortype': 'ResourceNotFoundException' });
      res.end(JSON.stringify({ Type: 'User', message: `Function not found: ${name ?? req.url}` }));
      return;
    }
    let body: string;
    let failed = false;
    try {
      const text = Buffer.concat(chunks).toString('utf8');
      body = JSON.stringify((await handler(JSON.parse(text === '' ? 'null' : text) as never, { getRemainingTimeInMillis: () => 900_000 })) ?? null);
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      failed = true;
      body = JSON.stringify({ errorType: e.name, errorMessage: e.message, trace: (e.stack ?? '').split('\n') });
    }
    if (Buffer.byteLength(body) > MAX_RESPONSE_BYTES) {
      failed = true;
      body = JSON.stringify({
        errorType: 'Function.ResponseSizeTooLarge',
        errorMessage: `Response payload size exceeded maximum allowed payload size (${MAX_RESPONSE_BYTES} bytes).`,
      });
    }
    this.responses.push(Buffer.byteLength(body));
    res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST', ...(failed ? { 'x-amz-function-error': 'Unhandled' } : {}) });
    res.end(body);
  }
}

export { LocalLambda };
