import { describe, expect, it } from 'vitest';
import { type ConsoleCommand, filterFields, runConsoleCommand } from '../../shared/console/console-command.js';
import { filterFromRequest } from '../../shared/console/request-filter.js';
import type { CommandContext } from '../../shared/parked/context.js';

const LOT = { workQueue: 'orders', retryHeader: 'x-retry-no' };
/** Never reached: the commands below fail before they walk. */
const NO_CONTEXT = {} as CommandContext;

describe('filterFields', () => {
  it('keeps the filter names of a query, each as the list of its values, and nothing else', () => {
    // Act
    const fields = filterFields(new URLSearchParams('group=E%7Cm%7Cq&error=A&error=B&older-than=2h&refresh=1&page=3'));
    // Assess
    expect(fields).toEqual({ group: ['E|m|q'], error: ['A', 'B'], 'older-than': ['2h'] });
  });

  it('keeps the filter names of a JSON body, not its count or rate', () => {
    expect(filterFields({ 'message-id': 'm-7', header: ['tenant=acme'], expectedCount: 3, ratePerSecond: 5 })).toEqual({
      'message-id': 'm-7',
      header: ['tenant=acme'],
    });
  });

  it('refuses what filterFromRequest refuses, naming the filter', () => {
    expect(() => filterFields({ 'older-than': 'soon' })).toThrow(
      expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining('older-than') }),
    );
  });

  it.each([new URLSearchParams('error=A&error=B&header=tenant%3Dacme&grep=x'), { group: 'PartnerDown|POST <url>|orders', 'newer-than': '1d', error: '' }])(
    'gives, through JSON, the filter the console checked (%s)',
    (input) => {
      // Act
      const travelled = JSON.parse(JSON.stringify(filterFields(input))) as Record<string, unknown>;
      // Assess
      expect(filterFromRequest(travelled)).toEqual(filterFromRequest(input));
    },
  );
});

describe('runConsoleCommand', () => {
  it.each<ConsoleCommand>([
    { kind: 'groups', nowMs: 1 },
    { kind: 'messages', filter: { error: ['A'] }, limit: 200, nowMs: 1 },
    { kind: 'message', pick: { position: 3, bodySha256: 'ab' } },
    { kind: 'replay', filter: { group: 'g' }, limit: 5, ratePerSecond: 50 },
    { kind: 'purge', filter: { 'message-id': 'm-1' }, limit: 1 },
    { kind: 'edit-replay', messageId: 'm-1', edit: { body: 'x', headers: { set: { tenant: 'acme' }, remove: ['x-trace'] } } },
  ])('takes a $kind command that went through JSON as it was', (command) => {
    expect(JSON.parse(JSON.stringify(command))).toEqual(command);
  });

  it('refuses a command it does not know, saying the console may be newer than the function', async () => {
    await expect(runConsoleCommand(NO_CONTEXT, { kind: 'rename' } as unknown as ConsoleCommand, LOT)).rejects.toThrow(
      expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining('newer than the operator function') }),
    );
  });

  it('checks an edit again where it runs, before it walks', async () => {
    await expect(
      runConsoleCommand(NO_CONTEXT, { kind: 'edit-replay', messageId: 'm-1', edit: { headers: { set: { 'x-retry-no': 1 } } } }, LOT),
    ).rejects.toThrow(expect.objectContaining({ name: 'ConsoleInputError' }));
  });

  it('parses a filter again where it runs, refusing a bad one before it walks', async () => {
    await expect(runConsoleCommand(NO_CONTEXT, { kind: 'purge', filter: { 'older-than': 'soon' }, limit: 1 }, LOT)).rejects.toThrow(
      expect.objectContaining({ name: 'ConsoleInputError', message: expect.stringContaining('older-than') }),
    );
  });
});
