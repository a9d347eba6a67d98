/**
 * CloudFormation's side of a Lambda-backed custom resource: the request it sends and the response it
 * waits for at the request's presigned `ResponseURL` (an HTTPS PUT of a JSON body). CloudFormation
 * waits up to an hour for that answer, so a handler must always send one; it refuses a body over
 * 4096 bytes, so the `Reason` is cut to fit, and the whole report goes to the log instead.
 * Shapes from the CloudFormation User Guide, "Custom resource request objects" and "response objects".
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** The request CloudFormation sends for `Custom::...` resource (a `Create`, `Update` or `Delete`). */
type CustomResourceEvent<Properties> = {
  readonly RequestType: 'Create' | 'Update' | 'Delete';
  readonly ServiceToken: string;
  readonly ResponseURL: string;
  readonly StackId: string;
  readonly RequestId: string;
  readonly ResourceType: string;
  readonly LogicalResourceId: string;
  /** Absent on `Create`: the id the handler answered before. */
  readonly PhysicalResourceId?: string;
  /** The template's properties, with `ServiceToken`; every value arrives as a string (or a list of strings). */
  readonly ResourceProperties: Properties & { readonly ServiceToken: string };
  /** `Update` only: the properties before it. */
  readonly OldResourceProperties?: Properties & { readonly ServiceToken: string };
};

/** What the handler decided: its status, why (shown in the stack's events) and values for `Fn::GetAtt`. */
type CustomResourceOutcome = {
  readonly status: 'SUCCESS' | 'FAILED';
  readonly reason: string;
  readonly physicalResourceId: string;
  readonly data?: Readonly<Record<string, string>>;
};

/** CloudFormation's limit on the whole response body, in bytes. */
const MAX_RESPONSE_BYTES = 4096;

/** What a cut reason ends with: where the rest is. */
const CUT_MARK = ' [cut: the whole report is in the log]';

/**
 * The response body for `event`, its `Reason` cut (at a character, not a byte, boundary) so that the
 * whole body stays within `maxBytes`.
 * @example responseBody(event, { status: 'SUCCESS', reason: 'applied', physicalResourceId: 'orders@/' })
 */
function responseBody(event: CustomResourceEvent<object>, outcome: CustomResourceOutcome, maxBytes = MAX_RESPONSE_BYTES): string {
  const body = (reason: string): string =>
    JSON.stringify({
      Status: outcome.status,
      Reason: reason,
      PhysicalResourceId: outcome.physicalResourceId,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
      NoEcho: false,
      Data: outcome.data ?? {},
    });
  const whole = body(outcome.reason);
  if (Buffer.byteLength(whole) <= maxBytes) return whole;
  // The most characters (not bytes: a character is never split) that fit, found by halving: JSON escapes make bytes per character vary.
  const characters = Array.from(outcome.reason);
  const cut = (keep: number): string => body(`${characters.slice(0, keep).join('')}${CUT_MARK}`);
  let [fits, tooMany] = [0, characters.length];
  while (tooMany - fits > 1) {
    const middle = Math.floor((fits + tooMany) / 2);
    if (Buffer.byteLength(cut(middle)) <= maxBytes) fits = middle;
    else tooMany = middle;
  }
  return cut(fits);
}

/** A port: PUTs a response body to a `ResponseURL`. */
type ResponseSender = (url: string, body: string) => Promise<void>;

/** How often the real sender tries: S3 can fail a PUT now and then; CloudFormation would wait an hour. */
const SEND_ATTEMPTS = 3;

/**
 * PUTs `body` to `url` (HTTPS, or HTTP for a local test server) with an empty content type, as the
 * presigned URL expects; tries 3 times, then throws naming the status or the error.
 */
const sendResponse: ResponseSender = async (url, body) => {
  let last: Error | undefined;
  for (let attempt = 1; attempt <= SEND_ATTEMPTS; attempt++) {
    try {
      await putOnce(url, body);
      return;
    } catch (error) {
      last = error as Error;
    }
  }
  throw new Error(`The response to CloudFormation was not accepted after ${SEND_ATTEMPTS} attempts: ${last?.message}`, { cause: last });
};

function putOnce(url: string, body: string): Promise<void> {
  const target = new URL(url);
  const send = target.protocol === 'http:' ? httpRequest : httpsRequest;
  return new Promise((resolve, reject) => {
    const req = send(target, { method: 'PUT', headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) }, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(body);
  });
}

export { MAX_RESPONSE_BYTES, responseBody, sendResponse };
export type { CustomResourceEvent, CustomResourceOutcome, ResponseSender };
