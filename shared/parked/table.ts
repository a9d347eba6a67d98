import { formatDuration } from './filters.js';
import type { ParkedView } from './parked-view.js';

/** Columns of `list`, fixed widths so rows can be printed as they are read (no second pass). */
const COLUMNS = [
  { title: 'MESSAGE ID', width: 36 },
  { title: 'AGE', width: 5 },
  { title: 'ATT', width: 3 },
  { title: 'ERROR', width: 24 },
  { title: 'ERROR MESSAGE', width: 50 },
  { title: 'ROUTING KEY', width: 40 },
] as const;

/**
 * Text on one line, whitespace collapsed, cut to `width` characters with an ellipsis.
 * @example cut('partner answered\n503', 12) // 'partner ans…'
 */
function cut(text: string, width: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= width ? oneLine : `${oneLine.slice(0, width - 1)}…`;
}

function line(cells: readonly string[]): string {
  return cells
    .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(COLUMNS[i]?.width ?? 0)))
    .join('  ')
    .trimEnd();
}

/** The header row of `list`. */
function tableHeader(): string {
  return line(COLUMNS.map((c) => c.title));
}

/** One parked message as a row of `list`; `-` where a value is missing. */
function tableRow(view: ParkedView, nowMs: number): string {
  const values = [
    view.messageId ?? '-',
    view.parkedAt === undefined ? '-' : formatDuration(nowMs - view.parkedAt.getTime()),
    view.attempts === undefined ? '-' : String(view.attempts),
    view.errorName ?? '-',
    view.errorMessage ?? view.parkReason ?? '-',
    view.routingKey || '-',
  ];
  return line(values.map((value, i) => cut(value, COLUMNS[i]?.width ?? value.length)));
}

/** One parked message as a JSON object for `list --json` (one per line), full texts. */
function listEntry(view: ParkedView, nowMs: number): Record<string, unknown> {
  return {
    messageId: view.messageId ?? null,
    parkedAt: view.parkedAt?.toISOString() ?? null,
    ageMs: view.parkedAt === undefined ? null : nowMs - view.parkedAt.getTime(),
    attempts: view.attempts ?? null,
    errorName: view.errorName ?? null,
    errorMessage: view.errorMessage ?? null,
    parkReason: view.parkReason ?? null,
    routingKey: view.routingKey,
    sourceQueue: view.sourceQueue ?? null,
    bodyBytes: view.body.length,
  };
}

export { cut, listEntry, tableHeader, tableRow };
