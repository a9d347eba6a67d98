import { Fn } from 'aws-cdk-lib';
import { CfnBroker } from 'aws-cdk-lib/aws-amazonmq';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { BrokerOptions } from './broker-options.js';
import type { Network } from './network.js';

/** Where the functions and the event source mappings find the broker. */
type BrokerEndpoint = {
  /** Undefined for an existing broker whose ARN was not given (no queue deploys its event function). */
  readonly arn: string | undefined;
  /** The AMQPS host name (AMQP_HOST), without scheme or port. */
  readonly host: string;
};

/**
 * An Amazon MQ for RabbitMQ broker named `<prefix>-broker`, for a stack that has none: single instance,
 * its one user from the broker secret (dynamic references: the password never enters the template),
 * private in the configured subnet and security groups, or publicly accessible (TLS, password) without them.
 * @example const broker = createBroker(this, { secret, options: { kind: 'create', instanceType: 'mq.t3.micro', engineVersion: '3.13' }, network: undefined, prefix: 'Orders' });
 */
function createBroker(
  scope: Construct,
  {
    secret,
    options,
    network,
    prefix,
  }: { readonly secret: ISecret; readonly options: BrokerOptions; readonly network: Network | undefined; readonly prefix: string },
): BrokerEndpoint {
  const broker = new CfnBroker(scope, 'Broker', {
    brokerName: `${prefix}-broker`,
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

export { createBroker };
export type { BrokerEndpoint };
