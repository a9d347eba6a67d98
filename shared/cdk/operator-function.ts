/**
 * The operator function of a construct: the parking lot's commands run in the broker's network for
 * `boomerang parked … --remote <function>` (shared/parked/operator-function.ts) and
 * `boomerang console --remote <function>` (shared/console/operator-console.ts). One per construct,
 * serving every declared queue; it may read the broker secret and nothing else; it has no Function URL
 * and no resource policy, so only an IAM principal granted `lambda:InvokeFunction` on it can run it
 * (`BoomerangQueues.grantOperate`).
 */
import { CfnOutput } from 'aws-cdk-lib';
import { Grant, type IGrantable, type PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ConfigError } from '../errors.js';
import { bundledCode } from './bundle-code.js';
import type { BundleEntry } from './bundles.js';
import type { DeployedQueue } from './deployed-queue.js';
import { boomerangFunction } from './function.js';
import { functionEnvironment } from './function-environment.js';
import { ownModule } from './own-modules.js';
import type { Shared } from './queue-functions.js';

/** The operator function's module (shared/console/operator-console: the parked CLI's ops and the console's), in this package. */
const OPERATOR_FUNCTION = ownModule(import.meta.url, '../console/operator-console');

/**
 * Lambda's longest timeout: a read walks the whole lot in one invocation (a read stopped half-way would
 * rotate a quorum lot), and stops 10 s before this when the lot is too long for it.
 */
const OPERATOR_SIZING = { timeoutSeconds: 900, memoryMb: 512 } as const;

/**
 * The bundle: every declared queue's `queue`, each connecting to its own vhost (`deploy.virtualHost`,
 * which the environment of its own functions gives), handed to `createOperatorConsoleFunction`.
 */
function operatorEntry(
  queues: readonly { readonly name: string; readonly path: string; readonly deploy: Pick<DeployedQueue['deploy'], 'virtualHost'> }[],
): BundleEntry {
  const imports = queues.map((queue, i) => `import { queue as q${i} } from ${JSON.stringify(queue.path)};`);
  const served = queues.map(
    (queue, i) =>
      `{ name: q${i}.name, loadConfig: (env, mode) => q${i}.loadConfig({ ...env, AMQP_VHOST: ${JSON.stringify(queue.deploy.virtualHost)} }, mode) }`,
  );
  return {
    name: 'operator',
    contents: `${imports.join('\n')}\nimport { createOperatorConsoleFunction } from ${JSON.stringify(OPERATOR_FUNCTION)};\nexport const handler = createOperatorConsoleFunction([${served.join(', ')}]);\n`,
  };
}

/**
 * Deploys the operator function `<prefix>-operator` in the construct's network, with outputs of its
 * name and ARN (what `--remote` takes).
 * @example const operator = operatorFunction(this, this.queues, shared); operator.grantOperate(role);
 */
function operatorFunction(
  scope: Construct,
  queues: readonly DeployedQueue[],
  shared: Shared & { readonly readSecret: PolicyStatement },
): { readonly fn: LambdaFunction; grantOperate(grantee: IGrantable): Grant } {
  const functionName = `${shared.prefix}-operator`;
  if (functionName.length > 64)
    throw new ConfigError(
      `The function name ${functionName} is ${functionName.length} characters; Lambda allows 64: shorten functionNamePrefix (by default the stack's name)`,
    );
  const [first] = queues;
  if (first === undefined) throw new ConfigError('The operator function serves the declared queues, and there is none');
  const { fn } = boomerangFunction(scope, {
    id: 'Operator',
    functionName,
    code: bundledCode(operatorEntry(queues), shared.workingDir, shared.bundled),
    sizing: OPERATOR_SIZING,
    // The first queue's vhost; each queue's own replaces it (operatorEntry).
    environment: functionEnvironment(
      { virtualHost: first.deploy.virtualHost, secretArn: shared.secretArn, brokerHost: shared.broker.host, functionName },
      shared.settings.functionEnvironment,
    ),
    logRetention: shared.settings.logRetention,
    network: shared.settings.network,
    statements: [shared.readSecret],
  });
  new CfnOutput(scope, 'OperatorFunctionName', {
    value: fn.functionName,
    description: 'The operator function: boomerang parked … --remote <this name> (needs lambda:InvokeFunction on it; BoomerangQueues.grantOperate)',
  });
  new CfnOutput(scope, 'OperatorFunctionArn', {
    value: fn.functionArn,
    description: "The operator function's ARN, for --remote and for the operators' IAM policy",
  });
  return {
    fn,
    // The unqualified ARN only: --remote invokes $LATEST, and no wildcard reaches the grantee's policy.
    grantOperate: (grantee) => Grant.addToPrincipal({ grantee, actions: ['lambda:InvokeFunction'], resourceArns: [fn.functionArn] }),
  };
}

export { operatorEntry, operatorFunction };
