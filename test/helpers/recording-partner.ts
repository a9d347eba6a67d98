import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A partner API that answers every request at once and records when each arrived. */
type RecordingPartner = {
  readonly url: string;
  /** Each request's arrival, in milliseconds of this process's monotonic clock, in arrival order. */
  readonly arrivals: readonly number[];
  /** The `x-message-id` of each request, in arrival order. */
  readonly ids: readonly string[];
  /** The `x-sender` of each request (the invocation's pid), in arrival order. */
  readonly senders: readonly string[];
  /** The `x-started-at` of each request (epoch ms: when its handler started, by the sender's clock), in arrival order. */
  readonly starts: readonly number[];
  close(): Promise<void>;
};

/**
 * Starts the local partner of the pace scenario on a free port of 127.0.0.1. The time is taken as the
 * request's headers are read, before anything else is done with it.
 * @example const partner = await startRecordingPartner(); ... mostInWindow(partner.arrivals) ... await partner.close();
 */
async function startRecordingPartner(): Promise<RecordingPartner> {
  const arrivals: number[] = [];
  const ids: string[] = [];
  const senders: string[] = [];
  const starts: number[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    arrivals.push(performance.now());
    ids.push(String(request.headers['x-message-id'] ?? ''));
    senders.push(String(request.headers['x-sender'] ?? ''));
    starts.push(Number(request.headers['x-started-at'] ?? Number.NaN));
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  // Keep-alive connections of the invocations would hold close() until they time out.
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    ids,
    senders,
    starts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export { startRecordingPartner };
export type { RecordingPartner };
