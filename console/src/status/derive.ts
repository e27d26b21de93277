import type { HistoryEvent } from "../api/types.js";

/**
 * What happened to each state, from the execution's history alone.
 *
 * The history has no explicit "this event belongs to that state entry" link, but
 * AWS's `previousEventId` chains the events of one run (the execution, a Parallel
 * branch, a Map iteration), and a child run's first event points at its parent's
 * `ParallelStateStarted`/`MapIterationStarted`. So walking `previousEventId` back to
 * the nearest `…StateEntered` names the entry any event belongs to, which is how
 * interleaved branches and iterations are told apart.
 */

export type StateStatus =
  "not-reached" | "running" | "succeeded" | "retried" | "caught" | "failed" | "aborted";

/** One entry into a state (a state in a loop or a Map processor has several). */
export interface StateEntry {
  name: string;
  type: string;
  enteredEventId: number;
  exitedEventId?: number;
  /** Timestamps of the entered and exited events. */
  enteredAt: string;
  exitedAt?: string;
  /** The attempt under way or last made (1 + retries). */
  attempt: number;
  /** The kind of state whose child run this entry is in (a Map iteration, a Parallel branch). */
  within?: string;
  /** Each failed attempt, in order: what the Retry saw. */
  failures: { attempt: number; error?: string; cause?: string; eventId: number }[];
  status: Exclude<StateStatus, "not-reached">;
  /** Failed attempts followed by another attempt (Retry). */
  retries: number;
  input?: string;
  output?: string;
  error?: string;
  cause?: string;
}

export interface StateSummary {
  status: StateStatus;
  entries: StateEntry[];
  retries: number;
}

export interface DerivedHistory {
  /** Per state name. */
  states: Map<string, StateSummary>;
  /** Per event id, the entry it belongs to (enteredEventId), when it belongs to one. */
  entryOfEvent: Map<number, number>;
  entries: Map<number, StateEntry>;
  /** Per event id of an attempt's start or failure, its attempt number (1, 2, …). */
  attemptOfEvent: Map<number, number>;
  /**
   * The transitions taken, as `from\u0000to` state names; `^start` and `^end` stand for
   * a scope's start and end markers (the graph colours these edges).
   */
  taken: Set<string>;
  /** The newest entry still running, if any (the state to show first). */
  current?: StateEntry;
  /** The execution's end, if the history has it. */
  ended?: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
}

const ENTERED = /^(\w+)StateEntered$/;
const EXITED = /^(\w+)StateExited$/;
/** An attempt of the state's work begins (a Retry starts another one). */
const ATTEMPT = /^(?:(?:Task|LambdaFunction|Activity)Scheduled|(?:Parallel|Map)StateStarted)$/;
/** An attempt failed: retried, caught, or the end of the run. */
const FAILURE =
  /^(?:(?:Task|LambdaFunction|Activity)(?:Failed|TimedOut|StartFailed|SubmitFailed|ScheduleFailed)|(?:Parallel|Map)StateFailed)$/;
/** A Parallel's or Map's own end, after its children's last events. */
const JOIN = /^(Parallel|Map)State(?:Succeeded|Failed|Aborted)$/;
const EXECUTION_END: Record<string, DerivedHistory["ended"]> = {
  ExecutionSucceeded: "SUCCEEDED",
  ExecutionFailed: "FAILED",
  ExecutionTimedOut: "TIMED_OUT",
  ExecutionAborted: "ABORTED",
};

/** The one `…EventDetails` object of an event. */
export function detailsOf(event: HistoryEvent): Record<string, unknown> {
  for (const key of Object.keys(event)) {
    if (isDetailsKey(key)) {
      const value = event[key];
      if (typeof value === "object" && value !== null) return value;
    }
  }
  return {};
}

function isDetailsKey(key: string): key is `${string}EventDetails` {
  return key.endsWith("EventDetails");
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

interface Working extends StateEntry {
  /** The last attempt failed and nothing started since. */
  pendingFailure: boolean;
  /** The entry of the Parallel/Map whose child run this entry is in. */
  parent?: number;
}

export function deriveHistory(events: readonly HistoryEvent[]): DerivedHistory {
  const byId = new Map<number, HistoryEvent>();
  for (const e of events) byId.set(e.id, e);
  const entryOfEvent = new Map<number, number>();
  const attemptOfEvent = new Map<number, number>();
  const taken = new Set<string>();
  /** Exits that a state entry follows (the others end their run). */
  const followed = new Set<number>();
  const working = new Map<number, Working>();
  let ended: DerivedHistory["ended"];
  let failedAt: number | undefined;

  /** The entry an event belongs to: the nearest entered state up the run's chain. */
  const entryOf = (id: number): number | undefined => {
    const seen: number[] = [];
    let found: number | undefined;
    for (let at: number | undefined = id; at !== undefined && at > 0;) {
      const known = entryOfEvent.get(at);
      if (known !== undefined) {
        found = known;
        break;
      }
      const e = byId.get(at);
      // A redrive starts the top level afresh: nothing before it is an enclosing entry.
      if (!e || EXITED.test(e.type) || e.type === "ExecutionRedriven") break;
      if (ENTERED.test(e.type)) {
        found = e.id;
        break;
      }
      seen.push(at);
      at = e.previousEventId;
    }
    if (found !== undefined) for (const s of seen) entryOfEvent.set(s, found);
    return found;
  };

  /** Entries never exited when the execution ended: the cause of the failure, or cut short. */
  const settle = (): void => {
    const failedEntry = failedAt === undefined ? undefined : entryOf(failedAt);
    const parentEnded = (entry: Working): boolean => {
      if (entry.parent === undefined) return ended !== undefined;
      const parent = working.get(entry.parent);
      return parent === undefined || parent.exitedEventId !== undefined || parentEnded(parent);
    };
    for (const entry of working.values()) {
      // A Fail state's error and cause are the execution's (or its branch's) failure.
      if (
        entry.type === "Fail" &&
        entry.error === undefined &&
        entry.enteredEventId === failedEntry
      ) {
        const failure = [...events].reverse().find((e) => e.type === "ExecutionFailed");
        const d = failure ? detailsOf(failure) : {};
        if (text(d.error) !== undefined) entry.error = text(d.error);
        if (text(d.cause) !== undefined) entry.cause = text(d.cause);
      }
      if (entry.exitedEventId !== undefined || entry.status === "failed") continue;
      if (!parentEnded(entry)) continue;
      if (entry.enteredEventId === failedEntry) {
        entry.status = "failed";
        if (entry.error === undefined) {
          const failure = [...events].reverse().find((e) => e.type === "ExecutionFailed");
          const d = failure ? detailsOf(failure) : {};
          if (text(d.error) !== undefined) entry.error = text(d.error);
          if (text(d.cause) !== undefined) entry.cause = text(d.cause);
        }
      } else entry.status = "aborted";
    }
  };

  for (const event of events) {
    const details = detailsOf(event);
    const entered = ENTERED.exec(event.type);
    if (entered) {
      const prev = byId.get(event.previousEventId);
      // After an exit the run goes on (same parent); otherwise this opens a child run.
      const parent =
        prev && EXITED.test(prev.type)
          ? working.get(entryOfExit(prev))?.parent
          : entryOf(event.previousEventId);
      const entry: Working = {
        name: text(details.name) ?? "?",
        type: entered[1]!,
        enteredEventId: event.id,
        enteredAt: event.timestamp,
        status: entered[1] === "Fail" ? "failed" : "running",
        retries: 0,
        attempt: 1,
        failures: [],
        pendingFailure: false,
        ...(parent !== undefined ? { parent } : {}),
      };
      const enclosing = parent === undefined ? undefined : working.get(parent);
      if (enclosing) entry.within = enclosing.type;
      const from = prev && EXITED.test(prev.type) ? working.get(entryOfExit(prev)) : undefined;
      if (from && prev) followed.add(prev.id);
      taken.add(`${from ? from.name : "^start"}\u0000${entry.name}`);
      const input = text(details.input);
      if (input !== undefined) entry.input = input;
      working.set(event.id, entry);
      entryOfEvent.set(event.id, event.id);
      continue;
    }
    if (EXITED.test(event.type)) {
      const id = entryOfExit(event);
      const entry = working.get(id);
      entryOfEvent.set(event.id, id);
      if (!entry) continue;
      entry.exitedEventId = event.id;
      entry.exitedAt = event.timestamp;
      const output = text(details.output);
      if (output !== undefined) entry.output = output;
      entry.status = entry.pendingFailure ? "caught" : entry.retries > 0 ? "retried" : "succeeded";
      continue;
    }
    if (event.type === "ExecutionRedriven") {
      // What was open at the end stays as it ended; the states entered again run anew.
      settle();
      ended = undefined;
      failedAt = undefined;
      continue;
    }
    const end = EXECUTION_END[event.type];
    if (end) {
      ended = end;
      if (end === "FAILED" || end === "TIMED_OUT") failedAt = event.previousEventId;
      continue;
    }
    const id = JOIN.test(event.type) ? entryOfJoin(event) : entryOf(event.id);
    const entry = id === undefined ? undefined : working.get(id);
    if (!entry) continue;
    if (ATTEMPT.test(event.type) && entry.pendingFailure) {
      entry.pendingFailure = false;
      entry.retries += 1;
      entry.attempt += 1;
      entry.status = "running";
      attemptOfEvent.set(event.id, entry.attempt);
    } else if (FAILURE.test(event.type)) {
      entry.pendingFailure = true;
      entry.status = "failed";
      const error = text(details.error);
      const cause = text(details.cause);
      if (error !== undefined) entry.error = error;
      if (cause !== undefined) entry.cause = cause;
      entry.failures.push({
        attempt: entry.attempt,
        eventId: event.id,
        ...(error !== undefined ? { error } : {}),
        ...(cause !== undefined ? { cause } : {}),
      });
      attemptOfEvent.set(event.id, entry.attempt);
    } else if (ATTEMPT.test(event.type)) {
      attemptOfEvent.set(event.id, entry.attempt);
    }
  }

  /**
   * The Parallel or Map a join event ends (…StateSucceeded/Failed/Aborted). AWS links
   * it to its last child's last event, so the chain leads into a child: climb to the
   * enclosing entry of the event's own kind.
   */
  function entryOfJoin(event: HistoryEvent): number | undefined {
    const kind = JOIN.exec(event.type)![1];
    let id = entryOf(event.previousEventId);
    for (let entry = id === undefined ? undefined : working.get(id); entry;) {
      if (entry.type === kind && entry.exitedEventId === undefined) break;
      id = entry.parent;
      entry = id === undefined ? undefined : working.get(id);
    }
    if (id !== undefined) entryOfEvent.set(event.id, id);
    return id;
  }

  /**
   * The entry an exit closes: the entry of the event before it, or, when that is a
   * child's (a Parallel or Map exits after its children's last events), its parent's.
   */
  function entryOfExit(exit: HistoryEvent): number {
    const name = detailsOf(exit).name;
    let id = entryOf(exit.previousEventId);
    for (let entry = id === undefined ? undefined : working.get(id); entry;) {
      if (entry.name === name || entry.parent === undefined) break;
      id = entry.parent;
      entry = working.get(id);
    }
    return id ?? -1;
  }

  settle();

  const entries = new Map<number, StateEntry>();
  const states = new Map<string, StateSummary>();
  let current: StateEntry | undefined;
  for (const [id, w] of working) {
    const { pendingFailure: _p, parent: _parent, ...entry } = w;
    entries.set(id, entry);
    // The deepest running entry wins: a Map's iteration rather than the Map.
    if (entry.status === "running" && entry.exitedEventId === undefined) current = entry;
    if (
      (entry.exitedEventId !== undefined && !followed.has(entry.exitedEventId)) ||
      entry.type === "Fail"
    ) {
      taken.add(`${entry.name}\u0000^end`);
    }
    const summary = states.get(entry.name) ?? { status: "not-reached", entries: [], retries: 0 };
    summary.entries.push(entry);
    summary.retries += entry.retries;
    states.set(entry.name, summary);
  }
  for (const summary of states.values()) summary.status = overall(summary.entries);
  return {
    states,
    entryOfEvent,
    entries,
    attemptOfEvent,
    taken,
    ...(current !== undefined ? { current } : {}),
    ...(ended !== undefined ? { ended } : {}),
  };
}

/** Across entries, the most telling status wins: what runs, then what went wrong. */
const PRECEDENCE: StateEntry["status"][] = [
  "running",
  "failed",
  "caught",
  "aborted",
  "retried",
  "succeeded",
];

function overall(entries: StateEntry[]): StateStatus {
  for (const status of PRECEDENCE) if (entries.some((e) => e.status === status)) return status;
  return "not-reached";
}
