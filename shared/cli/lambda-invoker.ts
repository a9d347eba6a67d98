import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { BoomerangError, ParkedCommandError, UsageError } from '../errors.js';

/** Sends one JSON request to the operator function and returns its JSON answer. A port: tests pass a fake. */
type Invoke = (request: unknown) => Promise<unknown>;

/**
 * The operator function failed, or could not be invoked (no such function, no permission, no
 * credentials): the message names the function and says what the SDK or the function said.
 */
class OperatorFunctionError extends BoomerangError {
  public constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'OperatorFunctionError';
  }
}

/** The region of a function ARN (`arn:aws:lambda:eu-west-1:123456789012:function:orders-operator`); undefined for a name. */
function regionOfArn(target: string): string | undefined {
  const match = /^arn:aws[a-z-]*:lambda:([a-z0-9-]+):/.exec(target);
  return match?.[1];
}

/** What a Node Lambda answers when its handler threw: `{ errorType, errorMessage, trace }`. */
function remoteError(target: string, payload: string, kind: string): Error {
  let errorType = 'Error';
  let errorMessage = payload;
  try {
    const parsed = JSON.parse(payload) as { errorType?: unknown; errorMessage?: unknown };
    if (typeof parsed.errorType === 'string') errorType = parsed.errorType;
    if (typeof parsed.errorMessage === 'string') errorMessage = parsed.errorMessage;
  } catch {
    // Not JSON (a runtime crash): the text itself says it.
  }
  // The command's own errors read as they do on a direct connection (same message, same exit code).
  if (errorType === 'ParkedCommandError' || errorType === 'ParkingLotBusyError') {
    const error = new ParkedCommandError(errorMessage);
    error.name = errorType;
    return error;
  }
  if (errorType === 'ConfigError') return new UsageError(errorMessage);
  return new OperatorFunctionError(`the operator function ${target} failed (${kind}): ${errorType}: ${errorMessage}`);
}

/**
 * Invokes `target` (a function name or ARN) synchronously with the caller's AWS credentials (the
 * SDK's chain: AWS_PROFILE, environment, SSO...). The region comes from the ARN, else AWS_REGION or
 * the profile; the endpoint from AWS_ENDPOINT_URL_LAMBDA when set (the tests' local Lambda).
 * @example const invoke = lambdaInvoker('orders-operator'); await invoke({ op: 'describe' });
 */
function lambdaInvoker(target: string, options: { readonly endpoint?: string } = {}): Invoke {
  if (target.trim() === '') throw new UsageError("--remote needs the operator function's name or ARN (the construct's OperatorFunctionName output)");
  // The CLI runs on Node 20 (package.json engines); the SDK's notice that its releases after January
  // 2027 will not would otherwise open every --remote command's stderr. AWS's own variable: set it to false to see it.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const region = regionOfArn(target);
  const client = new LambdaClient({ ...(region === undefined ? {} : { region }), ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }) });
  return async (request) => {
    let answer: InvokeCommandOutput;
    try {
      answer = await client.send(new InvokeCommand({ FunctionName: target, InvocationType: 'RequestResponse', Payload: Buffer.from(JSON.stringify(request)) }));
    } catch (error) {
      const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
      throw new OperatorFunctionError(
        `could not invoke the operator function ${target}: ${name}: ${message} (the operator's role needs lambda:InvokeFunction on it: docs/operations.md)`,
        { cause: error },
      );
    }
    const payload = answer.Payload === undefined ? '' : Buffer.from(answer.Payload).toString('utf8');
    if (answer.FunctionError !== undefined) throw remoteError(target, payload, answer.FunctionError);
    try {
      return JSON.parse(payload) as unknown;
    } catch (error) {
      throw new OperatorFunctionError(
        `the operator function ${target} answered something that is not JSON (${payload.length} bytes): ${payload.slice(0, 200)}`,
        { cause: error },
      );
    }
  };
}

export { lambdaInvoker, OperatorFunctionError, regionOfArn };
export type { Invoke };
