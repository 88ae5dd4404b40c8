import type { RecordShift } from './shift.ts';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A record's transition history as an older version reads it. An entry's `input` sets the record's fields of the
 * same names, so it is shown as the record is: renamed and retyped fields under their old names and types, fields
 * the older version lacks left out. Only the fields the input had: a removed field's default is not added to it.
 */
export const historyDown = (shift: RecordShift, body: unknown): unknown => {
  if (!isRec(body) || !Array.isArray(body.data)) return body;
  const data = body.data.map((entry) => {
    if (!isRec(entry) || !isRec(entry.input)) return entry;
    const input = entry.input;
    const shown = shift.down(input);
    const kept: Rec = {};
    for (const key of Object.keys(input)) {
      const name = shift.old(key);
      if (name in shown) kept[name] = shown[name];
    }
    return { ...entry, input: kept };
  });
  return { ...body, data };
};
