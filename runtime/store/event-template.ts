import type { RunEventBody } from "../../engine/core/events.js";

/**
 * A run event built in TypeScript with one JSON value left for a script to put
 * in, because only the script knows it: the input a Map window kept for a later
 * child, the outputs a join collected, the id of the task a token names. The
 * script only splices that value (Lua `fill`, store/lua/prelude.ts); the event's
 * shape and every other field are written here, once.
 */
export type EventTemplate = [before: string, after: string];

// JSON.stringify escapes U+0000, so the mark can never occur in the text around it.
const HOLE = "\u0000hole\u0000";

/** The fields of any member of a union of events. */
type FieldOf<E> = E extends unknown ? keyof E & string : never;

/** `body` as JSON with its field `hole` (whatever its value here) left open. */
export function eventTemplate<E extends RunEventBody>(body: E, hole: FieldOf<E>): EventTemplate {
  const text = JSON.stringify({ ...body, [hole]: HOLE });
  const mark = JSON.stringify(HOLE);
  const at = text.indexOf(mark);
  return [text.slice(0, at), text.slice(at + mark.length)];
}

/**
 * Any JSON value with one place left open: `build` puts the hole it is given where
 * the script's value goes (a chunk task's record, its items' inputs).
 */
export function valueTemplate(build: (hole: string) => unknown): EventTemplate {
  const text = JSON.stringify(build(HOLE));
  const mark = JSON.stringify(HOLE);
  const at = text.indexOf(mark);
  return [text.slice(0, at), text.slice(at + mark.length)];
}

/** What the script's `fill` makes of a template (for tests and TypeScript callers). */
export function fillTemplate(template: EventTemplate, json: string): string {
  return template[0] + json + template[1];
}
