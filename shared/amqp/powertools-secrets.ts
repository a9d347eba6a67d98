/**
 * The one module that loads Powertools Parameters' SecretsProvider, and with it the AWS SDK's Secrets
 * Manager client: `secrets.ts` imports it dynamically, and the bundles keep it in a chunk of its own,
 * so a cold start that reads no secret (AMQP_URL) never loads the SDK.
 */
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';

/** What `secrets.ts` asks of the provider: a value by id, within an age, or fetched afresh. */
type SecretsReader = {
  get(secretId: string, options: { readonly maxAge: number; readonly forceFetch: boolean }): Promise<unknown>;
};

/** A SecretsProvider (its own per-container cache) on a client made from `clientConfig`. */
function createSecretsReader(clientConfig: SecretsManagerClientConfig): SecretsReader {
  return new SecretsProvider({ clientConfig });
}

export { createSecretsReader };
export type { SecretsReader };
