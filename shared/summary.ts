/** What one invocation did; printed as the last stdout line locally, returned by the cloud handler. */
type Summary = {
  /** Deliveries taken from the work queue. */
  received: number;
  /** Handled successfully and acked. */
  acked: number;
  /** Re-published to the delay path (confirmed), then acked. */
  retried: number;
  /** Published to the parking lot (confirmed), then acked. */
  parked: number;
  /** Returned to the work queue untouched: not handled in time, or its copy was not confirmed. */
  requeued: number;
  /** Only with ACK_ORDER=ack-then-publish: acked, then neither copy could be published. */
  lost: number;
  durationMs: number;
  /** Why the invocation stopped taking messages. */
  stoppedBecause: StopReason;
};

type StopReason = 'idle' | 'max-messages' | 'budget' | 'consumer-cancelled' | 'connection-lost' | 'channel-closed' | 'publish-failed';

type Outcome = 'acked' | 'retried' | 'parked' | 'requeued' | 'lost';

function emptySummary(): Summary {
  return { received: 0, acked: 0, retried: 0, parked: 0, requeued: 0, lost: 0, durationMs: 0, stoppedBecause: 'idle' };
}

export { emptySummary };
export type { Outcome, StopReason, Summary };
