import { type Env, envOption, envString, envValue } from './env.js';
import { OPTIONS } from './option-table.js';

/**
 * Where the broker credentials come from when `AMQP_SECRET_ID` is set. The secret holds `{"url"}` or
 * `{"username", "password"}` (the shape the Lambda event source mapping uses); with the latter the
 * URL is built from host, port, vhost and TLS.
 */
type AmqpSecretConfig = {
  readonly secretId: string;
  /** Required with a username/password secret; a secret holding a URL needs none of these. */
  readonly host: string | undefined;
  readonly port: number | undefined;
  /** @default '/' */
  readonly vhost: string;
  /** amqps:// when true. @default true */
  readonly tls: boolean;
  /** How long a fetched secret is reused by a warm container. @default 300 */
  readonly cacheSeconds: number;
};

/** The broker secret's settings from AMQP_SECRET_ID, AMQP_HOST, AMQP_PORT, AMQP_VHOST, AMQP_TLS and SECRET_CACHE_SECONDS; undefined without AMQP_SECRET_ID. */
function amqpSecret(env: Env): AmqpSecretConfig | undefined {
  const secretId = envString(env, 'AMQP_SECRET_ID');
  if (secretId === undefined) return undefined;
  const tls = envOption(env, OPTIONS.amqpTls) === 'true';
  return Object.freeze({
    secretId,
    host: envString(env, 'AMQP_HOST'),
    port:
      env.AMQP_PORT === undefined || env.AMQP_PORT.trim() === '' ? undefined : (envValue(env, OPTIONS.amqpPort.variable, OPTIONS.amqpPort.range, 0) as number),
    vhost: envString(env, 'AMQP_VHOST') ?? '/',
    tls,
    cacheSeconds: envOption(env, OPTIONS.secretCacheSeconds),
  });
}

export { amqpSecret };
export type { AmqpSecretConfig };
