import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, Table } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';

/** The names Powertools Idempotency writes (its DynamoDBPersistenceLayer defaults). */
const KEY_ATTRIBUTE = 'id';
const EXPIRY_ATTRIBUTE = 'expiration';

/** The only calls the guard makes: a conditional put, a consistent get, the completion update, and the delete after a failed run. */
const GUARD_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

type IdempotencyTableProps = {
  /**
   * What happens to the table when the stack is deleted or the table replaced. Its records are
   * short-lived (an hour by default) and rebuilt by use; losing them only lets a duplicate arriving
   * inside the window run again, so the table goes with the stack unless told otherwise.
   * @default RemovalPolicy.DESTROY
   */
  readonly removalPolicy?: RemovalPolicy;
};

/**
 * The DynamoDB table the idempotency guard keeps its keys in: partition key `id` (string) and TTL
 * on `expiration`, as Powertools writes them; on-demand billing (traffic follows the queue, in
 * bursts); point-in-time recovery on (cdk-nag AwsSolutions-DDB3).
 * @example
 * const idempotency = new IdempotencyTable(stack, 'Idempotency');
 * idempotency.grant(pullFunction);
 * pullFunction.addEnvironment('IDEMPOTENCY_STORE', idempotency.storeSetting);
 */
class IdempotencyTable extends Construct {
  public readonly table: Table;

  public constructor(scope: Construct, id: string, props: IdempotencyTableProps = {}) {
    super(scope, id);
    this.table = new Table(this, 'Table', {
      partitionKey: { name: KEY_ATTRIBUTE, type: AttributeType.STRING },
      // DynamoDB deletes expired records on its own schedule (within days); Powertools' conditional
      // write already treats a record past `expiration` as absent, so this only keeps the table small.
      timeToLiveAttribute: EXPIRY_ATTRIBUTE,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      removalPolicy: props.removalPolicy ?? RemovalPolicy.DESTROY,
    });
  }

  /** The `IDEMPOTENCY_STORE` value that points a function at this table. */
  public get storeSetting(): string {
    return `dynamodb:${this.table.tableName}`;
  }

  /** The least-privilege statement for a role built from a policy document: the guard's four item calls on this table only. */
  public statement(): PolicyStatement {
    return new PolicyStatement({ actions: GUARD_ACTIONS, resources: [this.table.tableArn] });
  }

  /** Lets `grantee` (a function or its role) use the table through the guard, and nothing more. */
  public grant(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(this.statement());
  }
}

export { IdempotencyTable };
export type { IdempotencyTableProps };
