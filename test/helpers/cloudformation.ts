/**
 * CloudFormation's side of a custom resource, for tests: its request shapes (CloudFormation User Guide,
 * "Custom resource request objects") and a local HTTP server that stands for the presigned S3 URL the
 * response goes to, recording each PUT.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CustomResourceEvent } from '../../shared/topology/cfn-response.js';

/** A response as CloudFormation would read it, with the method and content type it came with. */
type RecordedResponse = {
  readonly method: string | undefined;
  readonly contentType: string | undefined;
  readonly body: {
    Status: string;
    Reason: string;
    PhysicalResourceId: string;
    StackId: string;
    RequestId: string;
    LogicalResourceId: string;
    NoEcho: boolean;
    Data: Record<string, string>;
  };
};

type ResponseServer = { readonly url: string; readonly responses: RecordedResponse[]; close(): Promise<void> };

/** Listens on 127.0.0.1 (a free port), answering 200 to each request and recording it. */
async function startResponseServer(): Promise<ResponseServer> {
  const responses: RecordedResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      responses.push({
        method: req.method,
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as RecordedResponse['body'],
      });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/cloudformation-response?X-Amz-Signature=test`,
    responses,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const STACK_ID = 'arn:aws:cloudformation:eu-west-1:123456789012:stack/Shop/5b918d10-cd98-11ea-90d5-0a9cd3354c10';
const SERVICE_TOKEN = 'arn:aws:lambda:eu-west-1:123456789012:function:Shop-orders-topology';

/**
 * A request as CloudFormation sends it: `Create` without a physical id; `Update` and `Delete` with
 * `physicalResourceId`; `Update` with the old properties.
 */
function cloudFormationEvent<P extends object>(
  requestType: 'Create' | 'Update' | 'Delete',
  responseUrl: string,
  properties: P,
  extra: { readonly physicalResourceId?: string; readonly oldProperties?: P } = {},
): CustomResourceEvent<P> {
  return {
    RequestType: requestType,
    ServiceToken: SERVICE_TOKEN,
    ResponseURL: responseUrl,
    StackId: STACK_ID,
    RequestId: crypto.randomUUID(),
    ResourceType: 'Custom::BoomerangTopology',
    LogicalResourceId: 'OrdersTopologyResource5F3A2B1C',
    ...(extra.physicalResourceId === undefined ? {} : { PhysicalResourceId: extra.physicalResourceId }),
    ResourceProperties: { ServiceToken: SERVICE_TOKEN, ...properties },
    ...(extra.oldProperties === undefined ? {} : { OldResourceProperties: { ServiceToken: SERVICE_TOKEN, ...extra.oldProperties } }),
  };
}

export { cloudFormationEvent, startResponseServer };
export type { ResponseServer };
