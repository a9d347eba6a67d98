import { describe, expect, it } from 'vitest';
import { prettyJson } from '../../shared/parked/pretty-json.js';

describe('prettyJson', () => {
  it.each([
    [
      'big numbers and trailing zeros as written',
      '{"orderId":12345678901234567890,"amount":10.50}',
      '{\n  "orderId": 12345678901234567890,\n  "amount": 10.50\n}',
    ],
    ['exponents and negative zero as written', '[1E+2,-0,0.0e0]', '[\n  1E+2,\n  -0,\n  0.0e0\n]'],
    ['escaped quotes, backslashes and structural characters inside strings', '{"a\\"b":"c\\\\\\",{[:]}"}', '{\n  "a\\"b": "c\\\\\\",{[:]}"\n}'],
    ['unicode escapes as written', '"\\u00e9\\n"', '"\\u00e9\\n"'],
    [
      'nested objects and arrays',
      '{"a":{"b":[1,{"c":null}]},"d":true}',
      '{\n  "a": {\n    "b": [\n      1,\n      {\n        "c": null\n      }\n    ]\n  },\n  "d": true\n}',
    ],
    ['empty object and array, with spaces inside', '{"o":{ },"l":[\n]}', '{\n  "o": {},\n  "l": []\n}'],
    ['duplicate keys, both kept', '{"a":1,"a":2}', '{\n  "a": 1,\n  "a": 2\n}'],
    ['already pretty input, unchanged', '{\n  "a": [\n    1,\n    2\n  ]\n}', '{\n  "a": [\n    1,\n    2\n  ]\n}'],
    ['a scalar with surrounding whitespace', ' \r\n 42 \t', '42'],
  ])('lays out %s', (_what, input, expected) => {
    expect(prettyJson(input)).toBe(expected);
  });

  it('lays out what JSON.stringify(…, 2) does when the values survive a parse', () => {
    // Prepare
    const value = {
      id: 'order-1',
      lines: [
        { sku: 'A', qty: 2 },
        { sku: 'B', qty: 1, tags: [] },
      ],
      paid: false,
      note: null,
      meta: {},
    };
    // Act / Assess
    expect(prettyJson(JSON.stringify(value))).toBe(JSON.stringify(value, null, 2));
  });

  it.each([['not JSON'], ['{"a":1'], ['{"a":1}x'], [''], ['NaN']])('says %j is not JSON', (input) => {
    expect(prettyJson(input)).toBeUndefined();
  });
});
