import { BROKER_VERSION, NATIVE_BROKER } from '../helpers/broker-version.js';
import { describe, expect, it } from 'vitest';
import type { SecretStore } from '../../shared/amqp/secrets.js';
import { loadConfig } from '../../shared/config/config.js';
import { parseBrokerVersion } from '../../shared/core/mode-settings.js';
import type { BrokerConnectionError } from '../../shared/errors.js';
import { connectAmqp10FromConfig } from '../../shared/native/amqp10-from-config.js';
import { AMQP_URL, uniqueName } from '../helpers/broker.js';
import { recordingLogger } from '../helpers/fakes.js';

// CI runs this file on 3.10 and on 4.3: ask the broker its version over AMQP 0-9-1 first.
const VERSION = BROKER_VERSION;
const { major = 0 } = parseBrokerVersion(VERSION) ?? {};

const WRONG = 'rotated-away';

/** A secret store that holds a stale password until it is asked to refresh; it counts its reads. */
function rotatingSecrets(): SecretStore & { reads: boolean[] } {
  const reads: boolean[] = [];
  const url = (password?: string): string => {
    const parsed = new URL(AMQP_URL);
    if (password !== undefined) parsed.password = password;
    return JSON.stringify({ url: parsed.toString() });
  };
  return {
    reads,
    get: (_secretId, options) => {
      reads.push(options?.refresh === true);
      return Promise.resolve(options?.refresh === true ? url() : url(WRONG));
    },
  };
}

const CONFIG = loadConfig({ AMQP_SECRET_ID: 'test/amqp10', CONNECT_TIMEOUT_MS: '8000', WORK_QUEUE: uniqueName('work') });

describe.runIf(NATIVE_BROKER)(`Function: connectAmqp10FromConfig on RabbitMQ ${VERSION}`, () => {
  it('reads the secret again when the broker refuses the cached password, and connects', async () => {
    // Prepare
    const secrets = rotatingSecrets();
    const logger = recordingLogger();

    // Act
    const broker = await connectAmqp10FromConfig(CONFIG, { connectionName: uniqueName('amqp10'), secrets, log: logger.log });

    // Assess
    await broker.close();
    expect(broker.brokerVersion).toBe(VERSION);
    expect(secrets.reads).toEqual([false, true]);
    expect(logger.entries()).toMatchObject([
      { level: 'warn', message: 'the broker refused the AMQP 1.0 login; reading the secret again (rotated?) and retrying once', secretId: 'test/amqp10' },
    ]);
    expect(logger.lines.join('\n')).not.toContain(WRONG);
  });
});

describe.runIf(major < 4)(`Function: connectAmqp10FromConfig on RabbitMQ ${VERSION} (no AMQP 1.0)`, () => {
  it('fails with the broker-speaks-no-AMQP-1.0 error and does not read the secret again', async () => {
    // Prepare
    const secrets = rotatingSecrets();

    // Act
    const error = await connectAmqp10FromConfig(CONFIG, { connectionName: uniqueName('amqp10'), secrets }).then(
      () => expect.fail('connected'),
      (e: unknown) => e as BrokerConnectionError,
    );

    // Assess
    expect(error.message).toContain('does not speak AMQP 1.0');
    expect(error.message).not.toContain(WRONG);
    expect(secrets.reads).toEqual([false]);
  });
});
