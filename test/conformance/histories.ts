import { awsEvent } from "../../api/aws/history.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { runExecution, type MemoryRunOptions } from "../../engine/drivers/memory.js";
import type { TestCase } from "../../engine/testing/cases.js";

/**
 * Whole execution histories recorded against AWS (data/histories.jsonl, one line per
 * case of cases.jsonl) against the ones Stepwise writes, event by event, as the AWS
 * endpoint's GetExecutionHistory shows them (api/aws/history.ts `awsEvent`). The
 * rules are in data/README.md, "histories.jsonl"; in short:
 *
 * - every field of every event counts, ids and `previousEventId` included; a field
 *   one side has and the other lacks is a difference, and so is an event too many;
 * - a recorded placeholder (`snf_role_arn`, `map_run_arn`, a string holding a
 *   `<...>` token such as `<ExecArnPart_0idx>`) matches any value;
 * - a string that holds JSON compares by its parsed value (the recording tool parsed
 *   some of AWS's JSON texts and not others);
 * - where the recording tool rewrote the events of Parallel branches (their ids
 *   masked as `[0]`, see `normaliseParallel`), Stepwise's history is rewritten the
 *   same way and those events compare as a set.
 */

export type Event = Record<string, unknown>;

export interface RecordedHistory {
  id: string;
  history: Event[];
}

export function parseHistories(text: string): RecordedHistory[] {
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line, i) => {
      const parsed = JSON.parse(line) as RecordedHistory;
      if (typeof parsed.id !== "string" || !Array.isArray(parsed.history)) {
        throw new Error(`histories.jsonl line ${i + 1}: needs "id" and "history"`);
      }
      return parsed;
    });
}

/** The first place a history departs from the recording. */
export interface HistoryDifference {
  /** What kind of difference, without the case's values: the report groups by it. */
  kind: string;
  /** 1-based position of the event in the recorded history (0: the history as a whole). */
  event: number;
  /** The field, from the event (`stateExitedEventDetails.output`); empty for the event itself. */
  path: string;
  expected?: unknown;
  actual?: unknown;
}

/** The placeholders the recording tool wrote for ARNs, the role and generated ids. */
const NAMED_PLACEHOLDERS = new Set(["snf_role_arn", "map_run_arn"]);
const TOKEN = /<[^<>\s]+>/;

export function isPlaceholder(value: string): boolean {
  return NAMED_PLACEHOLDERS.has(value) || TOKEN.test(value);
}

/**
 * The recording tool also replaced date-time strings in inputs and outputs with
 * `"date"` (or `"timestamp"` where it could not parse them): they match a string
 * that looks like a date and time (digits, a `T`, a time of day).
 */
const MASKED_TIMESTAMPS = new Set(["date", "timestamp"]);
const LOOKS_LIKE_TIMESTAMP = /^\d[\d-]*T\d{2}:\d{2}/;

function maskedTimestamp(expected: string, actual: unknown): boolean {
  return (
    MASKED_TIMESTAMPS.has(expected) &&
    typeof actual === "string" &&
    LOOKS_LIKE_TIMESTAMP.test(actual)
  );
}

function parsedJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function typeOf(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "array" : typeof value;
}

/** `a.b[2].c` → `a.b[].c`: the shape of a path, for grouping. */
function shape(path: string): string {
  return path.replace(/\[\d+\]/g, "[]");
}

/** Where `actual` departs from `expected` under the rules above (undefined: nowhere). */
export function compareValue(
  expected: unknown,
  actual: unknown,
  path = "",
):
  | { path: string; what: "missing" | "extra" | "value"; expected?: unknown; actual?: unknown }
  | undefined {
  if (typeof expected === "string") {
    if (isPlaceholder(expected) || expected === actual || maskedTimestamp(expected, actual))
      return undefined;
    const e = parsedJson(expected);
    if (typeof actual === "string") {
      const a = parsedJson(actual);
      if (e.ok && a.ok && typeof e.value !== "string") return compareValue(e.value, a.value, path);
      return { path, what: "value", expected, actual };
    }
    if (e.ok && typeof e.value !== "string") return compareValue(e.value, actual, path);
    return { path, what: "value", expected, actual };
  }
  if (typeof actual === "string" && typeof expected !== "string") {
    const a = parsedJson(actual);
    if (a.ok && typeof a.value !== "string") return compareValue(expected, a.value, path);
    return { path, what: "value", expected, actual };
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length)
      return { path, what: "value", expected, actual };
    for (let i = 0; i < expected.length; i++) {
      const d = compareValue(expected[i], actual[i], `${path}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return { path, what: "value", expected, actual };
    const at = (key: string) => (path === "" ? key : `${path}.${key}`);
    for (const key of Object.keys(expected).sort()) {
      if (!(key in actual)) return { path: at(key), what: "missing", expected: expected[key] };
    }
    for (const key of Object.keys(actual).sort()) {
      if (!(key in expected)) return { path: at(key), what: "extra", actual: actual[key] };
    }
    for (const key of Object.keys(expected).sort()) {
      const d = compareValue(expected[key], actual[key], at(key));
      if (d) return d;
    }
    return undefined;
  }
  // Numbers, booleans, null: JSON's 1.0 and 1 are one number.
  if (expected === actual) return undefined;
  return { path, what: "value", expected, actual };
}

function eventDifference(
  expected: Event,
  actual: Event,
  position: number,
): HistoryDifference | undefined {
  if (expected.type !== actual.type) {
    return {
      kind: `event type: ${String(expected.type)} recorded, ${String(actual.type)} written`,
      event: position,
      path: "type",
      expected: expected.type,
      actual: actual.type,
    };
  }
  const d = compareValue(expected, actual);
  if (!d) return undefined;
  const type = String(expected.type);
  const field = shape(d.path);
  const kind =
    d.what === "missing"
      ? `missing ${type}.${field}`
      : d.what === "extra"
        ? `extra ${type}.${field}`
        : field === "id" || field === "previousEventId"
          ? `${field} of ${type}`
          : `value of ${type}.${field} (${typeOf(d.expected)} recorded)`;
  const out: HistoryDifference = { kind, event: position, path: d.path };
  if ("expected" in d) out.expected = d.expected;
  if ("actual" in d) out.actual = d.actual;
  return out;
}

const PARALLEL_ENDS = new Set([
  "ParallelStateSucceeded",
  "ParallelStateAborted",
  "ParallelStateExited",
  "ParallelStateFailed",
]);

/**
 * The rewriting LocalStack's recording tool applied to the histories of some tests
 * (tests/aws/services/stepfunctions/conftest.py, `SfnNoneRecursiveParallelTransformer`,
 * commit 8b9a79f0): the events between a `ParallelStateStarted` and the Parallel
 * state's next end event get `id` `[0]` and `previousEventId` 0 and are sorted (their
 * order across branches is not AWS's to keep). Reproduced step for step, with its one
 * quirk: the slice it replaces at `ParallelStateExited` starts where the branch
 * events did, so it also drops the `ParallelStateSucceeded` (or `…Failed`) just
 * before, and the loop then skips the event after the exit.
 */
export function normaliseParallel(events: Event[]): Event[] {
  const list = events.map((e) => ({ ...e }));
  let start = 0;
  let sublist: Event[] = [];
  let inSublist = false;
  for (let i = 0; i < list.length; i++) {
    const event = list[i]!;
    const type = event.type;
    if (typeof type !== "string") inSublist = false;
    else if (PARALLEL_ENDS.has(type)) {
      list.splice(start, i - start, ...[...sublist].sort(byJson));
      inSublist = false;
    } else if (type === "ParallelStateStarted") {
      inSublist = true;
      sublist = [];
      start = i + 1;
    } else if (inSublist) {
      event.id = [0];
      event.previousEventId = 0;
      sublist.push(event);
    }
  }
  return list;
}

function byJson(a: Event, b: Event): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

const masked = (e: Event | undefined): boolean => e !== undefined && typeof e.id !== "number";

/** The first difference between a recorded history and Stepwise's (AWS-shaped, no timestamps). */
export function compareHistory(recorded: Event[], written: Event[]): HistoryDifference | undefined {
  const ours = recorded.some(masked) ? normaliseParallel(written) : written;
  const n = Math.min(recorded.length, ours.length);
  for (let i = 0; i < n; i++) {
    if (masked(recorded[i])) {
      // A run of masked events: the same events in any order.
      let j = i;
      while (j < n && masked(recorded[j])) j++;
      const d = compareAsSet(recorded.slice(i, j), ours.slice(i, j), i);
      if (d) return d;
      i = j - 1;
      continue;
    }
    const d = eventDifference(recorded[i]!, ours[i]!, i + 1);
    if (d) return d;
  }
  if (recorded.length !== ours.length) {
    const next = recorded.length > ours.length ? recorded[n] : ours[n];
    return {
      kind:
        recorded.length > ours.length
          ? `missing event ${String(next?.type)}`
          : `extra event ${String(next?.type)}`,
      event: n + 1,
      path: "",
      expected: recorded.length,
      actual: ours.length,
    };
  }
  return undefined;
}

function compareAsSet(
  recorded: Event[],
  ours: Event[],
  offset: number,
): HistoryDifference | undefined {
  const free = ours.map((_, k) => k);
  for (let k = 0; k < recorded.length; k++) {
    const match = free.findIndex((f) => eventDifference(recorded[k]!, ours[f]!, 0) === undefined);
    if (match >= 0) {
      free.splice(match, 1);
      continue;
    }
    // Report against the event of the same type and name, if any.
    const name = (e: Event) => JSON.stringify(Object.values(e).find(isObject)?.name ?? null);
    const like =
      free.find(
        (f) => ours[f]!.type === recorded[k]!.type && name(ours[f]!) === name(recorded[k]!),
      ) ?? free[0];
    if (like === undefined) {
      return {
        kind: `missing event ${String(recorded[k]!.type)}`,
        event: offset + k + 1,
        path: "",
      };
    }
    return eventDifference(recorded[k]!, ours[like]!, offset + k + 1);
  }
  return undefined;
}

/** A history event as GetExecutionHistory returns it, as JSON, without its timestamp. */
export type EventMapper = (event: HistoryEvent) => Record<string, unknown>;

export const awsShape: EventMapper = (event) => awsEvent(event, true);

function untimed(event: Record<string, unknown>): Event {
  const { timestamp: _t, ...rest } = JSON.parse(JSON.stringify(event)) as Event;
  return rest;
}

export interface HistoryResult {
  id: string;
  identical: boolean;
  difference?: HistoryDifference;
  /** The definition uses `ProcessorConfig.Mode: DISTRIBUTED` (Map Runs: the known gap). */
  distributed: boolean;
  recorded: Event[];
  written: Event[];
}

export interface HistoryRunOptions {
  /** How events are shaped (default: the AWS endpoint's `awsEvent`). */
  mapEvent?: EventMapper;
  /** Extra options for the in-memory driver. */
  run?: Partial<MemoryRunOptions>;
}

/** Runs each recorded case and compares its history. */
export async function compareHistories(
  recorded: RecordedHistory[],
  cases: TestCase[],
  options: HistoryRunOptions = {},
): Promise<HistoryResult[]> {
  const byId = new Map(cases.map((c) => [c.id, c]));
  const mapEvent = options.mapEvent ?? awsShape;
  const results: HistoryResult[] = [];
  for (const r of recorded) {
    const tc = byId.get(r.id);
    if (!tc) throw new Error(`histories.jsonl: no case '${r.id}' in cases.jsonl`);
    const distributed = JSON.stringify(tc.definition).includes('"DISTRIBUTED"');
    let written: Event[];
    try {
      const execution = await runExecution(tc.definition, {
        input: tc.input ?? {},
        clock: "virtual",
        maxTransitions: 1_000_000,
        ...(tc.context?.executionName ? { executionName: tc.context.executionName } : {}),
        ...(tc.context?.stateMachineName ? { stateMachineName: tc.context.stateMachineName } : {}),
        ...options.run,
      });
      written = execution.history.map((e) => untimed(mapEvent(e)));
    } catch (err) {
      results.push({
        id: r.id,
        identical: false,
        distributed,
        difference: {
          kind: "engine error",
          event: 0,
          path: "",
          actual: err instanceof Error ? err.message : String(err),
        },
        recorded: r.history,
        written: [],
      });
      continue;
    }
    const difference = compareHistory(r.history, written);
    const result: HistoryResult = {
      id: r.id,
      identical: difference === undefined,
      distributed,
      recorded: r.history,
      written,
    };
    if (difference) result.difference = difference;
    results.push(result);
  }
  return results;
}

function show(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) return "(absent)";
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** The report: how many are identical, then the others grouped by kind of difference. */
export function historyReport(results: HistoryResult[]): string[] {
  const identical = results.filter((r) => r.identical).length;
  const total = results.length;
  const outside = results.filter((r) => !r.distributed);
  const outsideIdentical = outside.filter((r) => r.identical).length;
  const lines = [
    `histories.jsonl: ${identical}/${total} histories identical (${((100 * identical) / Math.max(1, total)).toFixed(1)}%); ` +
      `outside the known gap (Map state in Mode DISTRIBUTED: Map Run events): ${outsideIdentical}/${outside.length}`,
  ];
  const groups = new Map<string, HistoryResult[]>();
  for (const r of results) {
    if (r.identical) continue;
    const kind = r.difference!.kind;
    groups.set(kind, [...(groups.get(kind) ?? []), r]);
  }
  for (const [kind, list] of [...groups.entries()].sort((a, b) => b[1].length - a[1].length)) {
    lines.push(`  ${String(list.length).padStart(3)}  ${kind}`);
    for (const r of list) {
      const d = r.difference!;
      const where = d.event > 0 ? `event ${d.event}${d.path ? ` ${d.path}` : ""}: ` : "";
      const values =
        "expected" in d || "actual" in d
          ? `recorded ${show(d.expected)}, written ${show(d.actual)}`
          : "";
      lines.push(`       ${r.distributed ? "[DISTRIBUTED] " : ""}${r.id}: ${where}${values}`);
    }
  }
  return lines;
}
