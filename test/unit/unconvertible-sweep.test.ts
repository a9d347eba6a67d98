import { describe, expect, it } from 'vitest';
import { holdsDecimal, isUnconvertible } from '../../shared/native/unconvertible-sweep.js';

describe('isUnconvertible', () => {
  it.each<[string, unknown, boolean]>([
    [
      'the session error RabbitMQ 4.3.6 sends',
      new Error('Lost the AMQP 1.0 connection to the broker: Session error: function_clause\n[{mc_amqpl,from_091,[decimal,{2,12345}]'),
      true,
    ],
    [
      'the same, as the cause of a wrapper',
      new Error('Invocation ended early', { cause: { description: 'Session error: function_clause [{mc_amqpl,from_091' } }),
      true,
    ],
    ['a connection closed by an operator', new Error('Lost the AMQP 1.0 connection to the broker: closed'), false],
    ['nothing', undefined, false],
  ])('%s: %s', (_what, error, expected) => {
    expect(isUnconvertible(error)).toBe(expected);
  });
});

describe('holdsDecimal', () => {
  it.each<[string, unknown, boolean]>([
    ['a decimal header', { price: { '!': 'decimal', value: { places: 2, digits: 1999 } } }, true],
    ['a decimal in a nested table', { order: { lines: [{ price: { '!': 'decimal', value: { places: 0, digits: 1 } } }] } }, true],
    ['other typed values', { n: { '!': 'int64', value: 1 }, ts: { '!': 'timestamp', value: 1 }, b: Buffer.from('decimal') }, false],
    ['no headers', undefined, false],
  ])('%s: %s', (_what, headers, expected) => {
    expect(holdsDecimal(headers)).toBe(expected);
  });
});
