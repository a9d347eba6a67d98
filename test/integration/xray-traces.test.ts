import { createSocket } from 'node:dgram';
import { afterAll, describe, expect, it } from 'vitest';
import type { Handler } from '../../shared/message/message.js';
import type { AttemptTracer } from '../../shared/observability/attempt-tracer.js';
import { silentLogger } from '../helpers/fakes.js';
import { sleep } from '../helpers/broker.js';
import { BROKER_VERSION } from '../helpers/broker-version.js';
import { pullUntil, setUpTopology, testConfig, total } from '../helpers/engine.js';
import { useTestBroker } from '../helpers/topology.js';

/**
 * X-Ray for real, short of AWS: a local UDP socket stands for the Lambda X-Ray daemon
 * (AWS_XRAY_DAEMON_ADDRESS), and the test reads the segment documents the X-Ray SDK sends it. The
 * environment is the one Lambda gives a function with active tracing (LAMBDA_TASK_ROOT puts the SDK
 * in its Lambda mode, with the facade segment; _X_AMZN_TRACE_ID is the invocation's trace), set before
 * the SDK is loaded, since it reads the daemon's address then: so this file runs in a process of its own
 * (test/vitest.config.ts, OWN_PROCESS_TESTS), where no other file loaded the SDK first.
 */
type SegmentDocument = {
  readonly name: string;
  readonly id: string;
  readonly trace_id: string;
  readonly parent_id?: string;
  readonly type?: string;
  readonly fault?: boolean;
  readonly error?: boolean;
  readonly annotations?: Record<string, unknown>;
  readonly metadata?: { boomerang?: Record<string, unknown> };
  readonly cause?: { exceptions: { message: string; type?: string }[] };
  readonly subsegments?: { readonly name: string }[];
};

const daemon = createSocket('udp4');
const documents: SegmentDocument[] = [];
daemon.on('message', (datagram) => {
  // `{"format":"json","version":1}` then a newline, then one document.
  const text = datagram.toString('utf8');
  documents.push(JSON.parse(text.slice(text.indexOf('\n') + 1)) as SegmentDocument);
});
await new Promise<void>((resolve) => daemon.bind(0, '127.0.0.1', resolve));

const INVOCATION_TRACE = '1-6750aa00-0123456789abcdef01234567';
const LAMBDA_ENV = {
  AWS_XRAY_DAEMON_ADDRESS: `127.0.0.1:${daemon.address().port}`,
  AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x',
  LAMBDA_TASK_ROOT: '/var/task',
  _X_AMZN_TRACE_ID: `Root=${INVOCATION_TRACE};Parent=1111111111111111;Sampled=1`,
  POWERTOOLS_SERVICE_NAME: 'boomerang-orders-pull',
};
const saved = Object.fromEntries(Object.keys(LAMBDA_ENV).map((key) => [key, process.env[key]]));
Object.assign(process.env, LAMBDA_ENV);
const { createXrayTracer } = await import('../../shared/observability/xray-tracer.js');
const { Tracer } = await import('@aws-lambda-powertools/tracer');
const tracer: AttemptTracer = createXrayTracer({ log: silentLogger });

afterAll(() => {
  daemon.close();
  for (const [key, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
});

const testBroker = useTestBroker();
const PRODUCER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
const TRACEPARENT = `00-${PRODUCER.traceId}-${PRODUCER.spanId}-01`;
const MESSAGE_TRACE = '1-4bf92f35-77b34da6a3ce929d0e0e4736';

/** The documents of one trace that the daemon got, once `count` of them (segments and subsegments) arrived. */
async function documentsOf(traceId: string, count: number): Promise<SegmentDocument[]> {
  const deadline = Date.now() + 5000;
  for (let got = documents.filter((d) => d.trace_id === traceId); got.length < count; got = documents.filter((d) => d.trace_id === traceId)) {
    if (Date.now() > deadline) throw new Error(`the daemon got ${got.length} documents of trace ${traceId}, not ${count}, in 5000 ms`);
    await sleep(20);
  }
  return documents.filter((d) => d.trace_id === traceId);
}

describe(`X-Ray segments through a local daemon socket, on RabbitMQ ${BROKER_VERSION}`, () => {
  it("a message that fails once then succeeds: two segments in its own trace, under the producer's span, and the handler's subsegment under its attempt", async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{"n":1}'), { persistent: true, messageId: 'xray-1', headers: { traceparent: TRACEPARENT } });
    const handler: Handler = (message) => {
      // What a team's code does with Powertools: a subsegment of the current segment.
      const subsegment = new Tracer().getSegment()?.addNewSubsegment('partner call');
      subsegment?.close();
      if (message.retryNo === 0) throw new Error('partner down');
    };
    // Act
    const summaries = await pullUntil(config, handler, (so) => total(so).acked === 1, 15_000, tracer);
    const trace = await documentsOf(MESSAGE_TRACE, 2);
    // Assess
    expect(total(summaries)).toMatchObject({ retried: 1, acked: 1 });
    const segments = trace.filter((d) => d.type !== 'subsegment');
    expect(
      segments.map((s) => [s.name, s.parent_id, s.annotations?.verdict, s.annotations?.delay_ms, s.annotations?.outcome, s.annotations?.retry_no]),
    ).toEqual([
      [`${config.workQueue} process`, PRODUCER.spanId, 'retry', 200, 'retried', 0],
      [`${config.workQueue} process`, PRODUCER.spanId, 'ack', undefined, 'acked', 1],
    ]);
    expect(segments[0]?.annotations).toMatchObject({
      queue: config.workQueue,
      message_id: 'xray-1',
      handler_ran: true,
      invocation_trace_id: INVOCATION_TRACE,
      messaging_system: 'rabbitmq',
    });
    expect(segments[0]?.fault).toBe(true);
    expect(segments[0]?.cause?.exceptions.map((e) => e.message)).toEqual(['partner down']);
    expect(segments[1]?.fault).toBeUndefined();
    // Closed before its attempt, each is sent inside its attempt's segment document.
    expect(segments.map((segment) => segment.subsegments?.map((child) => child.name))).toEqual([['partner call'], ['partner call']]);
  });

  it('continues an X-Amzn-Trace-Id header, and sends nothing for a message whose producer said not to sample', async () => {
    // Prepare
    const broker = testBroker();
    const config = testConfig();
    await setUpTopology(broker, config);
    const sampled = '1-5759e988-bd862e3fe1be46a994272793';
    const unsampled = '1-5759e988-00000000000000000000beef';
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), {
      persistent: true,
      messageId: 'sampled',
      headers: { 'X-Amzn-Trace-Id': `Root=${sampled};Parent=53995c3f42cd8ad8;Sampled=1` },
    });
    broker.channel.sendToQueue(config.workQueue, Buffer.from('{}'), {
      persistent: true,
      messageId: 'unsampled',
      headers: { 'X-Amzn-Trace-Id': `Root=${unsampled};Parent=53995c3f42cd8ad8;Sampled=0` },
    });
    // Act
    await pullUntil(
      config,
      () => undefined,
      (so) => total(so).acked === 2,
      15_000,
      tracer,
    );
    const [segment] = await documentsOf(sampled, 1);
    // What is asserted is an absence: give a document of the unsampled trace time to arrive, were one sent.
    await sleep(200);
    // Assess
    expect([segment?.parent_id, segment?.annotations?.message_id, segment?.annotations?.outcome]).toEqual(['53995c3f42cd8ad8', 'sampled', 'acked']);
    expect(documents.filter((d) => d.trace_id === unsampled)).toEqual([]);
  });
});
