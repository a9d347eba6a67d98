import amqp from 'amqplib';
import { describe, expect, it } from 'vitest';
import { brokerCpu, cpuMsOfStat, duringWork, listeningInodes } from '../bench/broker-cpu.js';
import { AMQP_URL } from '../helpers/broker.js';

const TABLE = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:1628 00000000:0000 0A 00000000:00000000 00:00000000 00000000   105        0 6894 1 00000000632a082d 100 0 0 10 0',
  '   1: 0100007F:1628 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000   105        0 7001 1 00000000632a082d 100 0 0 10 0',
  '   2: 00000000:1612 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 5734 1 00000000ac15e070 100 0 0 10 0',
  '   3: 00000000000000000000000000000000:1628 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 9898 1',
].join('\n');

describe('broker CPU: the listening socket of a port', () => {
  it.each([
    [5672, ['6894', '9898']],
    [5650, ['5734']],
    [5674, []],
  ])('port %i: inodes %j (listening only, IPv4 and IPv6 rows alike)', (port, inodes) => {
    expect(listeningInodes(TABLE, port)).toEqual(inodes);
  });
});

describe('broker CPU: user + system time from /proc/<pid>/stat', () => {
  it.each([
    ['42 (beam.smp) S 1 42 42 0 -1 4194560 0 0 0 0 150 25 0 0 20 0', 1750],
    // A command name with spaces and a parenthesis: fields are counted after the last one.
    ['7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0', 70],
  ])('%s: %i ms', (stat, ms) => {
    expect(cpuMsOfStat(stat)).toBe(ms);
  });
});

describe('broker CPU: the test broker, a process of this machine', () => {
  it('is found by its port, and its CPU grows while it works', async () => {
    // Prepare
    const read = brokerCpu(AMQP_URL);
    expect(read).toBeDefined();
    const before = read?.() ?? Number.NaN;
    // Act: work the broker for a while (connections cost it CPU)
    for (let i = 0; i < 20; i++) await (await amqp.connect(AMQP_URL)).close();
    // Assess
    expect(read?.() ?? Number.NaN).toBeGreaterThan(before);
  });

  it('has no reading for a broker on another machine', () => {
    expect(brokerCpu('amqp://guest:guest@broker.example:5672')).toBeUndefined();
  });
});

describe('broker CPU: around one run', () => {
  it("gives the run's result and the broker's CPU between the readings before and after it", async () => {
    // Prepare: a reader whose CPU advances 7 ms while the work runs
    let cpuMs = 100;
    const read = (): number => cpuMs;
    // Act
    const measured = await duringWork(read, async () => {
      cpuMs += 7;
      return 'done';
    });
    // Assess
    expect(measured).toEqual(['done', 7]);
  });

  it('gives no figure without a reader', async () => {
    expect(await duringWork(undefined, async () => 'done')).toEqual(['done', undefined]);
  });
});
