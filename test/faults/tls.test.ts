import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativeSupport } from '../helpers/broker.js';
import { FaultScenario } from '../helpers/fault-scenario.js';
import { spawnInvoke } from '../helpers/invoke-child.js';
import { PrivateRabbit } from '../helpers/private-rabbit.js';
import { makeTestCertificates, type TestCertificates } from '../helpers/test-certificates.js';

/**
 * TLS as on Amazon MQ: `amqps://`, certificate verification always on, a private CA trusted the
 * documented way (NODE_EXTRA_CA_CERTS, read by Node at start, hence a child process per invocation).
 * The broker is a private node of the broker under test's flavour (boomerang-tls: AMQP on 5686, TLS
 * on 5687; boomerang-r4-tls on 5786 and 5787 when AMQP_URL names a 4.x node) whose certificates
 * this test makes with openssl under a CA of its own.
 */
const HANDLER = 'test/bench/handlers/noop.ts';
const FAILING_HANDLER = 'test/bench/handlers/fail.ts';
/** The private node is of the broker under test's flavour: native settlements need 4.3 or later. */
const { native: NATIVE } = await nativeSupport('the native case over amqps://');

describe('amqps:// to a broker with a certificate from a private CA', () => {
  const node = PrivateRabbit.likeBrokerUnderTest('tls', 5686, 5687);
  let certs: TestCertificates;
  let scenario: FaultScenario;

  /** One pull invocation over TLS, as `npm run invoke -- pull` runs it. */
  const invokeOverTls = (extraCaFile: string, over = scenario, handler = HANDLER) =>
    spawnInvoke({
      handler,
      queue: over.config.workQueue,
      budgetMs: 10_000,
      env: { ...over.env, AMQP_URL: node.tlsUrl, NODE_EXTRA_CA_CERTS: extraCaFile, LOG_LEVEL: 'error' },
    }).exited;

  beforeAll(async () => {
    certs = makeTestCertificates();
    // Whatever an interrupted run left: the node must serve this run's certificates.
    await node.stop();
    await node.wipe();
    await node.start(certs.localDir);
    scenario = await FaultScenario.prepare({ url: node.url, label: 'tls', messages: 5, env: { IDLE_TIMEOUT_MS: '300' } });
  });

  afterAll(async () => {
    await scenario?.cleanup().catch(() => undefined);
    await node.stop();
    await node.wipe();
    certs?.remove();
  });

  it('runs a pull invocation over amqps:// with the CA given in NODE_EXTRA_CA_CERTS', async () => {
    // Act
    const result = await invokeOverTls(certs.caFile);

    // Assess
    expect(result.code, result.stderr).toBe(0);
    expect(result.summary).toMatchObject({ received: 5, acked: 5 });
    expect(await scenario.inFlight()).toBe(0);
  });

  // Amazon MQ takes amqps:// only, so a native queue settles through a TLS socket, which the
  // settlement writer holds (cork) for each pass: successes and retries must come out as settled.
  it.runIf(NATIVE)('settles natively over amqps:// (RabbitMQ 4.3+): successes accepted, failures delayed in the queue, then handled', async () => {
    // Prepare
    const nativeScenario = await FaultScenario.prepare({
      url: node.url,
      label: 'tls-native',
      messages: 6,
      env: { IDLE_TIMEOUT_MS: '300', DELAY_MODE: 'native' },
    });
    try {
      // Act
      const succeeded = await invokeOverTls(certs.caFile, nativeScenario);
      await nativeScenario.publish(4);
      const failed = await invokeOverTls(certs.caFile, nativeScenario, FAILING_HANDLER);
      const heldBack = await nativeScenario.inFlight();
      const drained = await nativeScenario.drainUntilQuiet({ idleTimeoutMs: 300 });

      // Assess
      expect(succeeded.code, succeeded.stderr).toBe(0);
      expect(succeeded.summary).toMatchObject({ received: 6, acked: 6 });
      expect(failed.code, failed.stderr).toBe(0);
      expect(failed.summary).toMatchObject({ received: 4, acked: 0, retried: 4, parked: 0 });
      // Held by the broker until their delivery time: not ready, so not counted.
      expect(heldBack).toBe(0);
      expect(drained.reduce((sum, summary) => sum + summary.acked, 0)).toBe(4);
    } finally {
      await nativeScenario.cleanup().catch(() => undefined);
    }
  });

  it('refuses a certificate from a CA it does not trust, and says where to give the CA', async () => {
    // Prepare: the child trusts a CA, but not the one that signed the broker's certificate.
    await scenario.publish(3);

    // Act
    const result = await invokeOverTls(certs.strangerCaFile);

    // Assess
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`Cannot connect to amqps://guest:***@127.0.0.1:${node.tlsPort}: the broker's TLS certificate is not trusted`);
    expect(result.stderr).toContain('NODE_EXTRA_CA_CERTS');
    expect(await scenario.inFlight()).toBe(3);
  });

  it("refuses a certificate for another host, naming the host it connected to and the certificate's", async () => {
    // Prepare: same CA, trusted; the certificate names other.example only.
    await node.rotateTls(certs.otherHostDir);

    // Act
    const result = await invokeOverTls(certs.caFile);

    // Assess
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      "the broker's TLS certificate does not match the host: connecting to 127.0.0.1, but the certificate is for DNS:other.example",
    );
    expect(await scenario.inFlight()).toBe(3);
  });
});
