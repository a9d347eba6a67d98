/**
 * The edit-and-replay request from the edit form: only what the operator changed, so everything
 * else (the body's bytes, tables, lists and `x-` headers) is replayed as it was parked.
 */

type HeaderValue = string | number | boolean;

/** What the edit form starts from (the message detail's `edit`). */
type EditStart = {
  body: { editable: true; text: string } | { editable: false; reason: string };
  headers: Record<string, HeaderValue>;
  otherHeaders: string[];
};

/** The API's edit: a new body only when the text changed, and the headers set and removed. */
type EditRequest = { body?: string; headers: { set: Record<string, HeaderValue>; remove: string[] } };

/**
 * The request for the form's body text (undefined when the body is not editable) and headers JSON;
 * a header taken out of the JSON, or given null, is removed (null removes the other headers too).
 * @example editRequest(start, start.body.text, '{"tenant": "globex"}')
 */
function editRequest(start: EditStart, body: string | undefined, headersJson: string): { request: EditRequest } | { problem: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(headersJson);
  } catch (error) {
    return { problem: `The headers must be a JSON object: ${(error as Error).message}` };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return { problem: 'The headers must be a JSON object, such as {"tenant": "acme"}' };
  const set: Record<string, HeaderValue> = {};
  const remove: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (value === null) remove.push(name);
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      if (start.headers[name] !== value) set[name] = value;
    } else return { problem: `Header ${JSON.stringify(name)} must be text, a number, true/false, or null to remove it` };
  }
  for (const name of Object.keys(start.headers)) if (!(name in parsed)) remove.push(name);
  const changed = start.body.editable && body !== undefined && body !== start.body.text;
  return { request: { ...(changed ? { body } : {}), headers: { set, remove } } };
}

export { editRequest };
export type { EditRequest, EditStart };
