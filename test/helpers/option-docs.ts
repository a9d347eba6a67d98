/**
 * The option tables of docs/configuration.md, rendered from the schema (`OPTIONS` and
 * `STRUCTURED_OPTIONS`): test/unit/option-table.test.ts fails when the docs differ, and rewrites them
 * with WRITE_OPTION_TABLES=1.
 */
import type { OptionRange } from '../../shared/config/option-range.js';
import { OPTIONS, type OptionSpec, type OptionTier } from '../../shared/config/option-table.js';
import { STRUCTURED_OPTIONS, type StructuredOption } from '../../shared/config/structured-options.js';
import { EVERYDAY_KEYS } from '../../shared/queues/queue-options.js';

/** One row of a table: a structured option's, or one of `OPTIONS` with its range in words. */
type DocRow = Omit<StructuredOption, 'reader'>;

const TIERS: readonly OptionTier[] = ['everyday', 'advanced', 'connection', 'stack'];

/** A range as the docs' `values` column says it. */
function valuesDoc(range: OptionRange): string {
  switch (range.type) {
    case 'integer':
      return range.max === undefined ? `an integer, at least ${range.min}` : `an integer, ${range.min} to ${range.max}`;
    case 'number':
      return `${range.min} to ${range.max}`;
    case 'fraction':
      return '0 to below 1';
    case 'choice':
      return range.choices.map((word) => `\`${word}\``).join(', ');
    case 'text':
      return 'a name';
    case 'http-url':
      return 'an `http://` or `https://` URL';
  }
}

function fromSpec(spec: OptionSpec): DocRow {
  const defaultDoc = spec.defaultDoc ?? (spec.default === undefined ? 'none' : `\`${spec.default}\``);
  return { code: spec.code, variable: spec.variable, tier: spec.tier, defaultDoc, values: valuesDoc(spec.range), doc: spec.doc };
}

/** Every option's row, each tier's rows together; the everyday ones in the order of `defineQueue`'s keys. */
function docRows(): DocRow[] {
  const rows = [...STRUCTURED_OPTIONS, ...Object.values(OPTIONS as Record<string, OptionSpec>).map(fromSpec)];
  const key = (row: DocRow): number => (row.tier === 'everyday' ? EVERYDAY_KEYS.indexOf(row.code!.split('.')[0]!) : 0);
  return TIERS.flatMap((tier) => rows.filter((row) => row.tier === tier).sort((a, b) => key(a) - key(b)));
}

const cell = (name: string | undefined): string => (name === undefined ? '-' : `\`${name}\``);

/** The Markdown table of one tier. */
function renderTable(tier: OptionTier): string {
  const rows = docRows().filter((row) => row.tier === tier);
  const inCode = tier === 'everyday' || tier === 'advanced';
  const head = inCode
    ? ['| option | variable | default | values | meaning |', '|---|---|---|---|---|']
    : ['| variable | default | values | meaning |', '|---|---|---|---|'];
  const lines = rows.map((row) =>
    inCode
      ? `| ${cell(row.code)} | ${cell(row.variable)} | ${row.defaultDoc} | ${row.values} | ${row.doc} |`
      : `| ${cell(row.variable)} | ${row.defaultDoc} | ${row.values} | ${row.doc} |`,
  );
  return [...head, ...lines].join('\n');
}

const START = (tier: OptionTier): string => `<!-- options: ${tier} (rendered from the schema by test/unit/option-table.test.ts) -->`;
const END = '<!-- /options -->';

/** `markdown` with each tier's table, between its markers, replaced by the rendered one. */
function withRenderedTables(markdown: string): string {
  return TIERS.reduce((text, tier) => {
    const start = text.indexOf(START(tier));
    const end = text.indexOf(END, start);
    if (start < 0 || end < 0) throw new Error(`docs/configuration.md has no ${START(tier)} ... ${END} block`);
    return `${text.slice(0, start + START(tier).length)}\n\n${renderTable(tier)}\n\n${text.slice(end)}`;
  }, markdown);
}

export { docRows, withRenderedTables };
