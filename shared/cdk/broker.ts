import { CfnParameter, Fn, Stack } from 'aws-cdk-lib';
import { CfnBroker } from 'aws-cdk-lib/aws-amazonmq';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { BrokerOptions } from './broker-options.js';
import type { Network } from './deployed-queue.js';

/** Where the functions and the event source mapping find the broker. */
type BrokerEndpoint = {
  /** Undefined for an existing broker when the stack was not asked for its ARN (no event source mapping). */
  readonly arn: string | undefined;
  /** The AMQPS host name (AMQP_HOST), without scheme or port. */
  readonly host: string;
};

/**
 * An Amazon MQ for RabbitMQ broker for a stack that has none: single instance, its one user from the
 * broker secret (dynamic references: the password never enters the template), private in the
 * configured subnet and security groups, or publicly accessible (TLS, password) without them.
 * @example const broker = createBroker(stack, secret, { kind: 'create', instanceType: 'mq.t3.micro', engineVersion: '3.13' }, undefined);
 */
function createBroker(
  scope: Construct,
  secret: ISecret,
  options: BrokerOptions,
  network: Network | undefined,
): BrokerEndpoint {
  const broker = new CfnBroker(scope, 'Broker', {
    brokerName: `${Stack.of(scope).stackName}-broker`,
    engineType: 'RABBITMQ',
    engineVersion: options.engineVersion,
    hostInstanceType: options.instanceType,
    deploymentMode: 'SINGLE_INSTANCE',
    // Required for RabbitMQ 3.13 and later: Amazon MQ applies patch versions itself.
    autoMinorVersionUpgrade: true,
    publiclyAccessible: network === undefined,
    // A single-instance broker lives in exactly one subnet.
    subnetIds: network ? network.subnetIds.slice(0, 1) : undefined,
    securityGroups: network ? [...network.securityGroupIds] : undefined,
    users: [{ username: secret.secretValueFromJson('username').unsafeUnwrap(), password: secret.secretValueFromJson('password').unsafeUnwrap() }],
  });
  // AmqpEndpoints are `amqps://b-1234....mq.eu-west-1.amazonaws.com:5671`: keep the host.
  const hostAndPort = Fn.select(1, Fn.split('amqps://', Fn.select(0, broker.attrAmqpEndpoints)));
  return { arn: broker.attrArn, host: Fn.select(0, Fn.split(':', hostAndPort)) };
}

/**
 * A broker the stack does not own: its AMQPS host and, `withArn`, its ARN (for the event source mapping
 * and `mq:DescribeBroker`) come in as CloudFormation parameters, so synth needs neither.
 */
function existingBroker(scope: Construct, options: { readonly withArn: boolean }): BrokerEndpoint {
  const arn = !options.withArn ? undefined : new CfnParameter(scope, 'BrokerArn', {
    type: 'String',
    description: 'ARN of the Amazon MQ for RabbitMQ broker that holds the work queue',
    allowedPattern: '^arn:aws[a-z-]*:mq:[a-z0-9-]+:[0-9]{12}:broker:.+$',
  });
  const host = new CfnParameter(scope, 'BrokerHost', {
    type: 'String',
    description: "The broker's AMQPS host name, without scheme or port (b-1234....mq.<region>.amazonaws.com)",
    allowedPattern: '^[A-Za-z0-9.-]+$',
  });
  return { arn: arn?.valueAsString, host: host.valueAsString };
}

export { createBroker, existingBroker };
export type { BrokerEndpoint };
