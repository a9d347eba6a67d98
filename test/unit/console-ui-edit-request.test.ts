import { describe, expect, it } from 'vitest';
import { editRequest, type EditStart } from '../../shared/console/ui/edit-request.js';

const START: EditStart = {
  body: { editable: true, text: '{"orderId":12345678901234567890,"amount":10.50}' },
  headers: { tenant: 'acme', 'x-custom': 'a', 'x-count': 7 },
  otherHeaders: ['meta'],
};
const START_JSON = JSON.stringify(START.headers, null, 2);

describe('editRequest', () => {
  it.each([
    ['nothing changed: no body, no header', START.body.editable ? START.body.text : '', START_JSON, { headers: { set: {}, remove: [] } }],
    [
      'the body changed: the whole new text',
      '{"orderId":12345678901234567890,"amount":11.50}',
      START_JSON,
      { body: '{"orderId":12345678901234567890,"amount":11.50}', headers: { set: {}, remove: [] } },
    ],
    [
      'a header changed and one added',
      START.body.editable ? START.body.text : '',
      '{"tenant":"globex","x-custom":"a","x-count":7,"region":"eu"}',
      { headers: { set: { tenant: 'globex', region: 'eu' }, remove: [] } },
    ],
    [
      'a header taken out, a table header given null',
      START.body.editable ? START.body.text : '',
      '{"tenant":"acme","x-count":7,"meta":null}',
      { headers: { set: {}, remove: ['meta', 'x-custom'] } },
    ],
    [
      'a number given as text is a change',
      START.body.editable ? START.body.text : '',
      '{"tenant":"acme","x-custom":"a","x-count":"7"}',
      { headers: { set: { 'x-count': '7' }, remove: [] } },
    ],
  ])('sends %s', (_what, body, headers, expected) => {
    expect(editRequest(START, body, headers)).toEqual({ request: expected });
  });

  it('never sends a body the page could not edit', () => {
    expect(editRequest({ ...START, body: { editable: false, reason: 'binary' } }, undefined, START_JSON)).toEqual({
      request: { headers: { set: {}, remove: [] } },
    });
  });

  it.each([
    ['not JSON', '{', 'must be a JSON object:'],
    ['a list', '[]', 'must be a JSON object, such as'],
    ['a nested value', '{"meta":{"a":1}}', 'Header "meta" must be text, a number, true/false, or null'],
  ])('says what is wrong with headers that are %s', (_what, headers, problem) => {
    expect(editRequest(START, undefined, headers)).toEqual({ problem: expect.stringContaining(problem) });
  });
});
