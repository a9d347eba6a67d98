import { describe, expect, it } from 'vitest';
import { jobResultText } from '../../shared/console/ui/job-result.js';

const REPLAYED = { selected: 4, noSource: 0, byQueue: {}, unroutable: {}, refused: [], unsendable: [], ending: 'done' };

describe('jobResultText', () => {
  it.each<[string, string, Record<string, unknown>, string[]]>([
    ['a replay to one queue', 'replay', { ...REPLAYED, byQueue: { orders: 4 } }, ['Replayed 4 messages to orders.']],
    ['a replay of one message', 'replay', { ...REPLAYED, byQueue: { orders: 1 } }, ['Replayed 1 message to orders.']],
    [
      'a replay to two queues',
      'replay',
      { ...REPLAYED, byQueue: { orders: 3, invoices: 1 } },
      ['Replayed 3 messages to orders.', 'Replayed 1 message to invoices.'],
    ],
    ['a replay that sent nothing', 'replay', { ...REPLAYED, selected: 0 }, ['Replayed nothing.']],
    [
      'a replay that left messages parked',
      'replay',
      {
        ...REPLAYED,
        byQueue: { orders: 1 },
        unroutable: { gone: 2 },
        noSource: 1,
        refused: [{ messageId: 'm-1', claimed: 'billing', reason: 'its header names billing, which is not the work queue' }],
        unsendable: [{ reason: 'headers over 64 KiB' }],
      },
      [
        'Replayed 1 message to orders.',
        'Left 2 messages parked: there is no queue gone.',
        'Left 1 message parked: no source queue recorded.',
        'Left message m-1 parked: its header names billing, which is not the work queue.',
        'Left a message without id parked: it cannot be sent (headers over 64 KiB).',
      ],
    ],
    ['a purge', 'purge', { selected: 3, deleted: 3, ending: 'done' }, ['Deleted 3 parked messages.']],
    [
      'a purge that deleted fewer than it matched',
      'purge',
      { selected: 3, deleted: 2, ending: 'done' },
      ['Deleted 2 parked messages.', '1 matching stayed parked.'],
    ],
    ['a purge of nothing', 'purge', { selected: 0, deleted: 0, ending: 'done' }, ['Deleted nothing.']],
    ['an edited replay', 'edit-replay', { found: true, edited: true, replayedTo: 'orders', ending: 'early' }, ['Replayed the edited message to orders.']],
    [
      'an edit that changed nothing',
      'edit-replay',
      { found: true, edited: false, replayedTo: 'orders', ending: 'early' },
      ['Nothing was changed: replayed the message as it was to orders.'],
    ],
    [
      'an edit whose queue is missing',
      'edit-replay',
      { found: true, edited: true, replayedTo: null, ending: 'done' },
      ['Left the message parked: its queue does not exist or it names no source queue.'],
    ],
    [
      'a refused edit',
      'edit-replay',
      { found: true, edited: false, replayedTo: null, refused: 'its header names billing', ending: 'done' },
      ['Left the message parked: its header names billing.'],
    ],
    [
      'an edit of a message gone since',
      'edit-replay',
      { found: false, edited: false, replayedTo: null, ending: 'done' },
      ['The message is no longer in the parking lot: nothing was replayed.'],
    ],
    [
      'a walk that stopped',
      'purge',
      { selected: 1, deleted: 1, ending: 'aborted' },
      ['Deleted 1 parked message.', 'Stopped before the end of the parking lot.'],
    ],
  ])('says what %s did', (_what, kind, result, expected) => {
    expect(jobResultText(kind, result)).toEqual(expected);
  });
});
