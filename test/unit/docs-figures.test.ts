import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GeneratedBlockError, generatedBlockIds, replaceGeneratedBlocks } from '../bench/doc-blocks.js';
import { DocsFiguresError, generateDocs, latestForMinor, renderBlock } from '../bench/docs-figures.js';
import { NO_PAUSE_MARKER_RESULTS, renderPauseMarkerCost } from '../bench/pause-marker-figures.js';
import {
  type BenchReport,
  NO_BENCH_RESULTS,
  NO_BUNDLING_RESULTS,
  NO_FAULT_RESULTS,
  NOT_RECORDED,
  renderBench,
  renderBundlingAcross,
  renderFaults,
  renderIdempotencyCostAcross,
  renderIdempotencyFaultsAcross,
} from '../bench/figures-render.js';
import { REPO_ROOT } from '../helpers/invoke-child.js';

const MACHINE = { cpu: 'AMD EPYC', cores: 2, memoryGiB: 24, node: 'v20.20.2', rabbitmq: 'RabbitMQ 3.10.8' };
const REPORT: BenchReport = {
  startedAt: '2026-11-24T01:02:03.000Z',
  machine: MACHINE,
  options: { sections: ['success', 'retry'] },
  rows: [{ section: 'success', metric: 'msg/s | 20 000', boomerang: '29 895', anchor: '22 475', ratio: '131 %', target: '≥ 90 %', verdict: 'meets' }],
};

describe('replaceGeneratedBlocks', () => {
  it.each([
    ['one block', 'a\n<!-- generated:x start -->\nold\n<!-- generated:x end -->\nb', 'a\n<!-- generated:x start -->\nNEW x\n\n<!-- generated:x end -->\nb'],
    [
      'two blocks',
      '<!-- generated:x start --><!-- generated:x end -->\n<!-- generated:y start -->\n1\n2\n<!-- generated:y end -->',
      '<!-- generated:x start -->\nNEW x\n\n<!-- generated:x end -->\n<!-- generated:y start -->\nNEW y\n\n<!-- generated:y end -->',
    ],
    ['no block', 'plain text\n', 'plain text\n'],
  ])('rewrites %s and keeps the markers', (_name, text, expected) => {
    // Act
    const out = replaceGeneratedBlocks(text, 'doc.md', (id) => `NEW ${id}\n`);
    // Assess
    expect(out).toBe(expected);
  });

  it.each([
    ['an end marker is missing', 'a\n<!-- generated:x start -->\nold\n'],
    ['the next block starts first', '<!-- generated:x start -->\n<!-- generated:y start -->\n<!-- generated:y end -->\n<!-- generated:x end -->'],
  ])('throws a GeneratedBlockError naming the file and block when %s', (_name, text) => {
    // Act and assess
    expect(() => replaceGeneratedBlocks(text, 'docs/proof.md', () => '')).toThrow(GeneratedBlockError);
    expect(() => replaceGeneratedBlocks(text, 'docs/proof.md', () => '')).toThrow(/docs\/proof\.md: the block "x"/);
  });
});

describe('latestForMinor', () => {
  it.each([
    [['bench-rabbitmq-3.10.8.json', 'bench-rabbitmq-3.10.12.json', 'bench-rabbitmq-4.3.6.json'], '3.10', 'bench-rabbitmq-3.10.12.json'],
    [['bench-rabbitmq-3.10.8.json', 'latest.json'], '4.3', undefined],
    [['bench-rabbitmq-3.1.8.json'], '3.10', undefined],
    [['bench-rabbitmq-3.10.8.json.bak'], '3.10', undefined],
  ])('picks the highest patch of the minor version among %j (%s)', (names, minor, expected) => {
    // Act and assess
    expect(latestForMinor(names, 'bench-rabbitmq-', minor, '.json')).toBe(expected);
  });
});

describe('renderBench', () => {
  it('says how to get figures when there are none', () => {
    expect(renderBench(undefined)).toBe(NO_BENCH_RESULTS);
  });

  it('heads the table with the broker, the date and the machine, and escapes pipes', () => {
    // Act
    const text = renderBench(REPORT);
    // Assess
    expect(text).toContain('of 2026-11-24 on **RabbitMQ 3.10.8**: AMD EPYC, 2 cores, 24 GiB RAM, Node v20.20.2');
    expect(text).toContain('Sections: success, retry.');
    expect(text).toContain('| success | msg/s \\| 20 000 | 29 895 | 22 475 | 131 % | ≥ 90 % | meets |');
  });

  it('names the run of each section when the file keeps sections of several runs', () => {
    // Prepare
    const sectionRuns = {
      success: { startedAt: '2026-11-24T01:02:03.000Z', rabbitmq: 'RabbitMQ 4.3.6' },
      retry: { startedAt: '2026-11-24T01:02:03.000Z', rabbitmq: 'RabbitMQ 4.3.6' },
      native: { startedAt: '2026-11-25T13:26:00.000Z', rabbitmq: 'RabbitMQ 4.3.6' },
    };
    // Act
    const text = renderBench({ ...REPORT, machine: { ...MACHINE, rabbitmq: 'RabbitMQ 4.3.6' }, sectionRuns });
    // Assess
    expect(text).toContain('`npm run bench` on **RabbitMQ 4.3.6**, the broker local and shared with the client.');
    // success and retry ran with the report's own run (its machine); native's run recorded none.
    expect(text).toContain(
      'Each section from its last run: success, retry (run of 2026-11-24 01:02 UTC on RabbitMQ 4.3.6; AMD EPYC, 2 cores, 24 GiB RAM, Node v20.20.2); native (run of 2026-11-25 13:26 UTC on RabbitMQ 4.3.6; machine not recorded).',
    );
  });

  it("names each run's machine where the run recorded it, and the report's own for its own run", () => {
    // Prepare
    const intel = { ...MACHINE, cpu: 'Intel Xeon', rabbitmq: 'RabbitMQ 4.3.6' };
    const sectionRuns = {
      success: { startedAt: '2026-11-24T01:02:03.000Z', rabbitmq: 'RabbitMQ 4.3.6', machine: intel },
      native: { startedAt: '2026-11-27T20:00:00.000Z', rabbitmq: 'RabbitMQ 4.3.6' },
    };
    // Act
    const text = renderBench({ ...REPORT, startedAt: '2026-11-27T20:00:00.000Z', machine: { ...MACHINE, rabbitmq: 'RabbitMQ 4.3.6' }, sectionRuns });
    // Assess
    expect(text).toContain('success (run of 2026-11-24 01:02 UTC on RabbitMQ 4.3.6; Intel Xeon, 2 cores');
    expect(text).toMatch(/native \(run of [^;]+; AMD EPYC, 2 cores/);
  });
});

describe('renderFaults', () => {
  it('says how to get figures when there are none', () => {
    expect(renderFaults([])).toBe(NO_FAULT_RESULTS);
  });

  it('gives sent, lost, duplicates and repeated effects their columns, other scalars as figures, and leaves nested objects out', () => {
    // Prepare
    const newer = {
      scenario: 'tcp-cut',
      at: '2026-11-25T10:00:00.000Z',
      rabbitmq: 'RabbitMQ 4.3.6',
      machine: MACHINE,
      sent: 5000,
      missing: 0,
      duplicates: 293,
      repeatedEffects: 150,
      cuts: 15,
      nextSummary: { acked: 1 },
    };
    const older = {
      scenario: 'broker-restart',
      at: '2026-11-24T09:00:00.000Z',
      rabbitmq: 'RabbitMQ 4.3.6',
      sent: 3000,
      missing: 0,
      duplicates: 26,
      duplicatesPerKill: 0.333,
      exitCodes: [0, 1],
    };
    // Act
    const text = renderFaults([newer, older]);
    // Assess
    expect(text).toContain('on **RabbitMQ 4.3.6**, runs of 2026-11-24 to 2026-11-25: AMD EPYC');
    expect(text).toContain('"repeated effects" counts only the second (and later) successful handler runs');
    expect(text).toContain('| scenario | run | sent | lost | duplicates | repeated effects | other figures |');
    // A report written before repeated effects were counted says so, rather than 0 or a crash.
    expect(text).toContain(`| broker-restart | 2026-11-24 09:00 | 3000 | 0 | 26 | ${NOT_RECORDED} | duplicatesPerKill 0.33; exitCodes [0, 1] |`);
    expect(text).toContain('| tcp-cut | 2026-11-25 10:00 | 5000 | 0 | 293 | 150 | cuts 15 |');
    expect(text).not.toContain('idempotency off and on');
  });

  it('puts each scenario run with idempotency on next to its run with it off, duplicates and repeated effects per kill, cut or restart', () => {
    // Prepare
    const at = '2026-11-24T01:00:00.000Z';
    const reports = [
      { scenario: 'sigkill-publish-then-ack-batch-1', at, sent: 600, missing: 0, duplicates: 8, repeatedEffects: 8, kills: 25 },
      {
        scenario: 'sigkill-publish-then-ack-batch-1-idempotent',
        at,
        sent: 600,
        missing: 0,
        duplicates: 3,
        repeatedEffects: 1,
        kills: 25,
        idempotency: 'redis',
      },
      { scenario: 'tcp-cut', at, sent: 2000, missing: 0, duplicates: 456, repeatedEffects: 300, cuts: 15 },
      { scenario: 'tcp-cut-idempotent', at, sent: 2000, missing: 0, duplicates: 30, repeatedEffects: 0, cuts: 15, idempotency: 'redis' },
      // Written before repeated effects were counted.
      { scenario: 'broker-restart-idempotent', at, sent: 3000, missing: 0, duplicates: 2 },
      { scenario: 'broker-restart', at, sent: 3000, missing: 0, duplicates: 15 },
      { scenario: 'crash-loop-idempotent', at, sent: 1, missing: 0, duplicates: 0 },
    ];
    // Act
    const text = renderFaults(reports);
    // Assess
    expect(text).toContain(
      '| fault | faults injected (off / on) | sent (off / on) | lost (off / on) | duplicates (off / on) | repeated effects (off / on) | duplicates per fault (off / on) | repeated effects per fault (off / on) |',
    );
    expect(text).toContain('| sigkill-publish-then-ack-batch-1 | 25 / 25 | 600 / 600 | 0 / 0 | 8 / 3 | 8 / 1 | 0.32 / 0.12 | 0.32 / 0.04 |');
    expect(text).toContain('| tcp-cut | 15 / 15 | 2000 / 2000 | 0 / 0 | 456 / 30 | 300 / 0 | 30.40 / 2.00 | 20.00 / 0.00 |');
    expect(text).toContain(
      `| broker-restart | 1 / 1 | 3000 / 3000 | 0 / 0 | 15 / 2 | ${NOT_RECORDED} / ${NOT_RECORDED} | 15.00 / 2.00 | ${NOT_RECORDED} / ${NOT_RECORDED} |`,
    );
    // A run with idempotency on and none off has no row to stand next to.
    expect(text.split('idempotency off and on')[1]).not.toContain('crash-loop');
  });
});

describe('renderIdempotencyFaultsAcross', () => {
  it('sets each broker side by side, per fault, off / on; a scenario one broker lacks shows a dash', () => {
    // Prepare
    const at = '2026-11-24T01:00:00.000Z';
    const older = [
      { scenario: 'tcp-cut', at, sent: 2000, missing: 0, duplicates: 150, repeatedEffects: 105, cuts: 15 },
      { scenario: 'tcp-cut-idempotent', at, sent: 2000, missing: 0, duplicates: 30, repeatedEffects: 0, cuts: 15 },
      { scenario: 'broker-restart', at, sent: 3000, missing: 0, duplicates: 3 },
      { scenario: 'broker-restart-idempotent', at, sent: 3000, missing: 0, duplicates: 0 },
    ];
    const newer = older.filter((r) => r.scenario.startsWith('tcp-cut')).map((r) => ({ ...r, duplicates: r.duplicates * 2 }));
    // Act
    const text = renderIdempotencyFaultsAcross([
      { rabbitmq: 'RabbitMQ 3.10.8', reports: older },
      { rabbitmq: 'RabbitMQ 4.3.6', reports: newer },
    ]);
    // Assess
    expect(text).toContain(
      '| scenario | repeated effects, RabbitMQ 3.10.8 | repeated effects, RabbitMQ 4.3.6 | duplicates, RabbitMQ 3.10.8 | duplicates, RabbitMQ 4.3.6 |',
    );
    expect(text).toContain('| tcp-cut | 7.00 / 0.00 | 7.00 / 0.00 | 10.00 / 2.00 | 20.00 / 4.00 |');
    expect(text).toContain(`| broker-restart | ${NOT_RECORDED} / ${NOT_RECORDED} | - / - | 3.00 / 0.00 | - / - |`);
    expect(renderIdempotencyFaultsAcross([{ rabbitmq: 'RabbitMQ 3.10.8', reports: [] }])).toBe(NO_FAULT_RESULTS);
  });
});

describe('renderIdempotencyCostAcross', () => {
  it('gives each path and store its row, each broker its column, with both rates', () => {
    // Prepare
    const row = (section: string, store: string, ratio: string) => ({
      section,
      metric: `msg/s with idempotency on (${store}), no-op handler`,
      boomerang: '12 337 (client CPU 81 µs/msg)',
      anchor: '53 510 (client CPU 13 µs/msg): the same path with idempotency off',
      ratio,
      target: 'comparison',
      verdict: 'info' as const,
    });
    const report = (rows: BenchReport['rows']): BenchReport => ({ ...REPORT, rows });
    // Act
    const text = renderIdempotencyCostAcross([
      { rabbitmq: 'RabbitMQ 3.10.8', report: report([row('idempotency, success path', 'redis', '22 %'), row('success path', 'x', '140 %')]) },
      { rabbitmq: 'RabbitMQ 4.3.6', report: report([row('idempotency, success path', 'redis', '30 %')]) },
    ]);
    // Assess: only the idempotency rows
    expect(text).toContain('| path | store | RabbitMQ 3.10.8 | RabbitMQ 4.3.6 |');
    expect(text).toContain('| success path | redis | 22 % (12 337 msg/s against 53 510) | 30 % (12 337 msg/s against 53 510) |');
    expect(text).not.toContain('140 %');
    expect(renderIdempotencyCostAcross([{ rabbitmq: 'RabbitMQ 3.10.8', report: report([]) }])).toBe(NO_BENCH_RESULTS);
  });
});

describe('renderBundlingAcross', () => {
  it("gives each NodejsFunction variant and figure its row, each broker its column, the construct's figure first", () => {
    // Prepare
    const row = (what: string, variant: string, mine: string, theirs: string, ratio: string) => ({
      section: 'serverless cost, bundling',
      metric: `webhooks pull, ${what} (median of 15): BoomerangQueues (esbuild, code split into chunks, @aws-sdk/* external) against ${variant}`,
      boomerang: `${mine} (range 30-40 ms); index.mjs 330.4 kB, 70.1 kB gzipped`,
      anchor: `${theirs} (range 150-180 ms); index.mjs 900.0 kB, 200.0 kB gzipped`,
      ratio,
      target: '≤ 100 %',
      verdict: 'meets' as const,
    });
    const report = (rows: BenchReport['rows']): BenchReport => ({ ...REPORT, rows });
    // Act
    const text = renderBundlingAcross([
      {
        rabbitmq: 'RabbitMQ 3.10.8',
        report: report([row('import() of the bundle in a fresh node process', 'NodejsFunction (one file)', '33 ms', '160 ms', '21 %')]),
      },
      { rabbitmq: 'RabbitMQ 4.3.6', report: report([]) },
    ]);
    // Assess: brokers without the rows get no column
    expect(text).toContain('| BoomerangQueues against | RabbitMQ 3.10.8 |');
    expect(text).toContain('| import() of the bundle in a fresh node process, NodejsFunction (one file) | 33 ms against 160 ms (21 %) |');
    expect(renderBundlingAcross([{ rabbitmq: 'RabbitMQ 3.10.8', report: report([]) }])).toBe(NO_BUNDLING_RESULTS);
  });
});

describe('renderPauseMarkerCost', () => {
  it('puts each broker in a column and a variant one broker did not run as -', () => {
    // Act
    const text = renderPauseMarkerCost([
      { broker: 'RabbitMQ 3.10.8', rounds: 150, recordedAt: '2026-11-27T20:00:00.000Z', results: { start: { 'channel alone': 1.314 } } },
      {
        broker: 'RabbitMQ 4.3.6',
        rounds: 150,
        recordedAt: '2026-11-27T20:05:00.000Z',
        results: { start: { 'channel alone': 1.48 }, 'native | start': { pair: 2.6 } },
      },
    ]);
    // Assess
    expect(text).toContain('| section | variant | RabbitMQ 3.10.8 | RabbitMQ 4.3.6 |');
    expect(text).toContain('| start | channel alone | 1.31 ms | 1.48 ms |');
    expect(text).toContain('| native \\| start | pair | - | 2.60 ms |');
    expect(renderPauseMarkerCost([])).toBe(NO_PAUSE_MARKER_RESULTS);
  });
});

describe('renderBlock', () => {
  const dirs: string[] = [];
  const resultsDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-figures-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('writes the placeholder when no results file exists for that broker', () => {
    // Prepare
    const dir = resultsDir();
    writeFileSync(join(dir, 'bench-rabbitmq-4.3.6.json'), JSON.stringify(REPORT));
    // Act and assess
    expect(renderBlock('bench-3.10', dir, dir, 'docs/proof.md')).toContain(NO_BENCH_RESULTS);
    expect(renderBlock('faults-3.10', dir, dir, 'docs/proof.md')).toContain(NO_FAULT_RESULTS);
  });

  it('renders the kept bench and fault results of that broker', () => {
    // Prepare
    const dir = resultsDir();
    writeFileSync(join(dir, 'bench-rabbitmq-3.10.8.json'), JSON.stringify(REPORT));
    mkdirSync(join(dir, 'faults', 'rabbitmq-3.10.8'), { recursive: true });
    writeFileSync(
      join(dir, 'faults', 'rabbitmq-3.10.8', 'tcp-cut.json'),
      JSON.stringify({ scenario: 'tcp-cut', at: '2026-11-24T01:00:00.000Z', rabbitmq: 'RabbitMQ 3.10.8', sent: 10, missing: 0, duplicates: 1 }),
    );
    // Act and assess
    expect(renderBlock('bench-3.10', dir, dir, 'docs/proof.md')).toContain(renderBench(REPORT));
    expect(renderBlock('faults-3.10', dir, dir, 'docs/proof.md')).toContain(`| tcp-cut | 2026-11-24 01:00 | 10 | 0 | 1 | ${NOT_RECORDED} | - |`);
  });

  it.each([
    ['an unknown block id', 'bench-latest', /docs\/proof\.md: unknown generated block "bench-latest"/],
    ['a results file that is not JSON', 'bench-3.10', /bench-rabbitmq-3\.10\.8\.json is not readable JSON/],
  ])('fails with a DocsFiguresError on %s', (_name, id, message) => {
    // Prepare
    const dir = resultsDir();
    writeFileSync(join(dir, 'bench-rabbitmq-3.10.8.json'), '{ cut off');
    // Act and assess
    expect(() => renderBlock(id, dir, dir, 'docs/proof.md')).toThrow(DocsFiguresError);
    expect(() => renderBlock(id, dir, dir, 'docs/proof.md')).toThrow(message);
  });
});

describe('the docs', () => {
  it('hold every generated block exactly as npm run docs:figures writes it from bench-results/', () => {
    // Act
    const docs = generateDocs(REPO_ROOT);
    const ids = docs.flatMap((d) => generatedBlockIds(d.current));
    // Assess: a hand edit inside a block, or results newer than the docs, shows up here.
    expect(ids).toEqual(expect.arrayContaining(['bench-3.10', 'bench-4.3', 'faults-3.10', 'faults-4.3']));
    for (const d of docs) expect({ file: d.file, text: d.current }).toEqual({ file: d.file, text: d.expected });
  });

  it('list every runtime dependency of package.json, and no other, in docs/dependencies.md', () => {
    // Prepare
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const page = readFileSync(join(REPO_ROOT, 'docs', 'dependencies.md'), 'utf8');
    const runtimeTable = page.split('## Runtime dependencies')[1]?.split('\n## ')[0] ?? '';
    // Act
    const listed = [...runtimeTable.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]);
    // Assess
    expect(listed.sort()).toEqual(Object.keys(pkg.dependencies).sort());
  });

  it('link only to files and headings that exist', () => {
    // Prepare
    const docs = generateDocs(REPO_ROOT);
    const slugs = new Map(docs.map((d) => [d.file, new Set([...d.current.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] as string)))]));
    const broken: string[] = [];
    // Act
    for (const d of docs) {
      const dir = d.file.includes('/') ? 'docs/' : '';
      for (const [, target] of d.current.matchAll(/\]\((?!https?:|mailto:)([^)\s]+)\)/g)) {
        const [path, anchor] = (target as string).split('#') as [string, string | undefined];
        const file = path === '' ? d.file : normalize(dir + path);
        const exists = slugs.has(file) || existsInRepo(file);
        if (!exists || (anchor !== undefined && slugs.has(file) && !slugs.get(file)?.has(anchor))) broken.push(`${d.file} → ${target}`);
      }
    }
    // Assess
    expect(broken).toEqual([]);
  });
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function normalize(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '.' && part !== '') parts.push(part);
  }
  return parts.join('/');
}

function existsInRepo(file: string): boolean {
  try {
    readFileSync(join(REPO_ROOT, file));
    return true;
  } catch (error) {
    // A folder is a fine link target too.
    return (error as NodeJS.ErrnoException).code === 'EISDIR';
  }
}
