import { describe, expect, it } from 'vitest';
import { type DeployOptions, resolveDeploy } from '../../shared/queues/deploy-options.js';

const SOURCE = "defineQueue('orders')";

describe('resolveDeploy: parkedDepthAlarm and retention', () => {
  it('alarms on any parked message and deploys no retention by default', () => {
    // Act
    const deploy = resolveDeploy({}, SOURCE);
    // Assess
    expect([deploy.parkedDepthAlarm, deploy.retention]).toEqual([0, undefined]);
  });

  it.each<[string, DeployOptions, number | undefined]>([
    ['a threshold', { parkedDepthAlarm: 25 }, 25],
    ['false: no alarm', { parkedDepthAlarm: false }, undefined],
  ])('takes parkedDepthAlarm %s', (_what, given, threshold) => {
    expect(resolveDeploy(given, SOURCE).parkedDepthAlarm).toBe(threshold);
  });

  it('applies the retention defaults: once a day, 300 s, 256 MB', () => {
    // Act
    const { retention } = resolveDeploy({ retention: { olderThan: '14d' } }, SOURCE);
    // Assess
    expect(retention).toEqual({ olderThan: '14d', olderThanMs: 14 * 86_400_000, rateHours: 24, timeoutSeconds: 300, memoryMb: 256 });
  });

  it.each<[string, unknown, string]>([
    ['a negative threshold', { parkedDepthAlarm: -1 }, `deploy.parkedDepthAlarm in ${SOURCE} must be an integer from 0 to 1000000; got -1`],
    ['true as a threshold', { parkedDepthAlarm: true }, `deploy.parkedDepthAlarm in ${SOURCE} must be an integer from 0 to 1000000; got true`],
    ['retention without olderThan', { retention: {} }, `deploy.retention.olderThan in ${SOURCE} must be an age of at least 1h, such as '14d' or '36h'`],
    ['an age that is no duration', { retention: { olderThan: 'two weeks' } }, 'got "two weeks"'],
    ['an age under an hour', { retention: { olderThan: '30m' } }, `deploy.retention.olderThan in ${SOURCE} must be an age of at least 1h`],
    [
      'a schedule out of range',
      { retention: { olderThan: '14d', rateHours: 0 } },
      `deploy.retention.rateHours in ${SOURCE} must be an integer from 1 to 720; got 0`,
    ],
    [
      'an unknown retention option',
      { retention: { olderThan: '14d', every: '1d' } },
      `Unknown option deploy.retention.every in ${SOURCE}; expected one of olderThan, rateHours, timeoutSeconds, memoryMb`,
    ],
    ['retention that is no object', { retention: '14d' }, `deploy.retention in ${SOURCE} must be an object; got "14d"`],
  ])('refuses %s, naming the option and the queue', (_what, given, message) => {
    // Act + Assess
    expect(() => resolveDeploy(given as DeployOptions, SOURCE)).toThrow(
      expect.objectContaining({ name: 'ConfigError', message: expect.stringContaining(message) }),
    );
  });
});
