import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { STORE_CONNECT_TIMEOUT_MS, STORE_REQUEST_TIMEOUT_MS, type StoreHandle } from './store-handle.js';

/**
 * A DynamoDB table with Powertools' key schema (partition key `id`, TTL on `expiration`). The SDK
 * client opens its connections on first use. `clientConfig` goes over the defaults (tests give a
 * region and static credentials for dynalite).
 * @example const { persistence, close } = createDynamoDbStore('orders-idempotency');
 */
function createDynamoDbStore(table: string, endpoint?: string, clientConfig: DynamoDBClientConfig = {}): StoreHandle {
  const client = new DynamoDBClient({
    // One retry covers a dropped keep-alive connection; more would keep the message waiting on a store that is down.
    maxAttempts: 2,
    // Without throwOnRequestTimeout the SDK only logs a request past its timeout and keeps waiting.
    requestHandler: { connectionTimeout: STORE_CONNECT_TIMEOUT_MS, requestTimeout: STORE_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
    ...(endpoint === undefined ? {} : { endpoint }),
    ...clientConfig,
  });
  return {
    persistence: new DynamoDBPersistenceLayer({ tableName: table, awsSdkV3Client: client }),
    close: async () => client.destroy(),
  };
}

export { createDynamoDbStore };
