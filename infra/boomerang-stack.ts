import { CfnParameter, Lazy, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { BoomerangQueues } from '../shared/cdk/boomerang-queues.js';
import type { StackConfig } from './stack-config.js';

type BoomerangStackProps = StackProps & {
  readonly config: StackConfig;
  /** The queue files' folder. @default BOOMERANG_FUNCTIONS_DIR, else functions/ in the working directory */
  readonly functionsDir?: string;
};

/**
 * The example app's stack: the `BoomerangQueues` construct over every queue declared in functions/,
 * with the settings of the context and the per-account values as CloudFormation parameters
 * (`BrokerSecretArn`, and unless the stack creates the broker `BrokerHost`, plus `BrokerArn` when a queue
 * deploys its event function), so that synth needs no account. The construct's id is `Default`, which
 * CDK leaves out of logical ids: the resources keep the ids they had when this stack made them itself,
 * and a deployed stack updates in place.
 * @example new BoomerangStack(app, 'Boomerang', { config: stackConfigFromContext(app.node.getAllContext()) });
 */
class BoomerangStack extends Stack {
  public readonly queues: BoomerangQueues;

  public constructor(scope: Construct, id: string, props: BoomerangStackProps) {
    super(scope, id, props);
    const { alarmTopicArn, ...settings } = props.config;
    const brokerSecret = new CfnParameter(this, 'BrokerSecretArn', {
      type: 'String',
      description:
        'Complete ARN of the Secrets Manager secret {"username","password"} of the broker user (the event source mappings and the functions read it)',
      allowedPattern: '^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:.+$',
    }).valueAsString;
    Validations.of(this).acknowledge({
      id: 'CloudFormation-Validate::W2509',
      reason: 'BrokerSecretArn holds the ARN of the secret, not a secret: nothing to hide with NoEcho.',
    });
    // Only an event source mapping needs the broker's ARN, and only the queues say whether one is deployed:
    // the parameter is added once the construct has read them, and a pull-only stack asks for none.
    let brokerArn: CfnParameter | undefined;
    const existing =
      settings.createBroker === undefined
        ? {
            brokerHost: new CfnParameter(this, 'BrokerHost', {
              type: 'String',
              description: "The broker's AMQPS host name, without scheme or port (b-1234....mq.<region>.amazonaws.com)",
              allowedPattern: '^[A-Za-z0-9.-]+$',
            }).valueAsString,
            brokerArn: Lazy.string({ produce: () => brokerArn?.valueAsString }),
          }
        : {};
    this.queues = new BoomerangQueues(this, 'Default', {
      ...settings,
      ...existing,
      functionsDir: props.functionsDir,
      brokerSecret,
      alarmTopic: alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', alarmTopicArn),
    });
    if (settings.createBroker === undefined && this.queues.queues.some((q) => q.deploy.modes.includes('event'))) {
      brokerArn = new CfnParameter(this, 'BrokerArn', {
        type: 'String',
        description: 'ARN of the Amazon MQ for RabbitMQ broker that holds the work queue',
        allowedPattern: '^arn:aws[a-z-]*:mq:[a-z0-9-]+:[0-9]{12}:broker:.+$',
      });
    }
    this.templateOptions.description ??= `Boomerang: stateless delayed retries for RabbitMQ (${this.queues.queues.map((q) => q.name).join(', ')})`;
  }
}

export { BoomerangStack };
export type { BoomerangStackProps };
