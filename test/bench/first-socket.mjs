// For the cold-start children (cold-start-child.mjs, cold-start-anchor.mjs): when the process made its
// first client socket, seen on Node's `net.client.socket` diagnostics channel. In a cold start that
// is the broker's connection: nothing opens one before it.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

/** Starts watching; the returned function gives the first socket's time (`now()`'s clock), or undefined before one. */
export function watchFirstSocket(now) {
  let at;
  const onSocket = () => {
    at = now();
    unsubscribe('net.client.socket', onSocket);
  };
  subscribe('net.client.socket', onSocket);
  return () => at;
}
