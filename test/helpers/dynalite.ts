import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { CreateTableCommand, DynamoDBClient, type DynamoDBClientConfig, ScanCommand } from '@aws-sdk/client-dynamodb';

/** dynalite ships no types: it returns a plain node:http server that speaks the DynamoDB API. */
type DynaliteFactory = (options: { createTableMs?: number; deleteTableMs?: number; updateTableMs?: number }) => Server;
const dynalite = createRequire(import.meta.url)('dynalite') as DynaliteFactory;

type Dynalite = {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** A region and static credentials: the SDK's default chain would probe the instance metadata service. */
  readonly clientConfig: DynamoDBClientConfig;
  /** Creates a table with the key schema Powertools expects (`id`, a string), named `test-<uuid>` unless given. */
  createTable(name?: string): Promise<string>;
  /** Every item of a table, as the SDK returns them (attribute values still typed: `{ S: ... }`). */
  items(table: string): Promise<Record<string, unknown>[]>;
  /** Stops the server; requests after it are refused. Safe to call twice. */
  stop(): Promise<void>;
};

/**
 * Starts dynalite (in memory) on an ephemeral port of 127.0.0.1. Tables are ACTIVE at once.
 * dynalite does not implement UpdateTimeToLive, so no TTL is set on the table: Powertools does not
 * need the deletion (its conditional write treats a record past `expiration` as absent), and the
 * real table's TTL on `expiration` is checked in the infra test.
 * @example const db = await startDynalite(); const table = await db.createTable(); await db.stop();
 */
async function startDynalite(): Promise<Dynalite> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clientConfig: DynamoDBClientConfig = { region: 'us-east-1', credentials: { accessKeyId: 'dynalite', secretAccessKey: 'dynalite' } };
  const client = new DynamoDBClient({ ...clientConfig, endpoint });
  let stopped = false;
  return {
    endpoint,
    clientConfig,
    createTable: async (name = `test-${randomUUID()}`) => {
      await client.send(
        new CreateTableCommand({
          TableName: name,
          AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      return name;
    },
    items: async (table) => (await client.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [],
    stop: async () => {
      if (stopped) return;
      stopped = true;
      client.destroy();
      // Keep-alive sockets of other clients would hold `close` open: cut them.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export { startDynalite };
export type { Dynalite };
