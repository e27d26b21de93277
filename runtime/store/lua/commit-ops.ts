import type { EventTemplate } from "../event-template.js";
import type { TaskMode } from "../../../task-runners/resources.js";
import type { ExecutionEnd } from "./end-execution.js";

/**
 * What a step's effects mean inside Redis (runtime/commit/effects.ts plans them). Runs,
 * tasks and joins are short ids; events and outputs are JSON texts stored as they are.
 */
export type CommitOp =
  /** Deliver an event to a run's inbox (this run or another; `front`: ahead of the rest). */
  | { op: "push"; run: string; event: string; front?: boolean }
  /**
   * Create a child run and start it with `started`; `owner`: a Distributed Map's
   * item, whose history goes to that child execution's (short id) record and list.
   */
  | { op: "spawn"; run: string; state: string; started: string; owner?: string }
  /** As spawn, with the input a Map window kept in `ji:<join>` field `index` (taken out of it). */
  | {
      op: "spawnKept";
      run: string;
      state: string;
      join: string;
      index: number;
      started: EventTemplate;
      owner?: string;
    }
  /**
   * This run's child execution (its `owner`, set at spawn): set these record fields
   * (stored names and values, flat); `mapRun`: list it under that Map Run (id) at `at`
   * (ms); `keepSeconds`: it ended, its record and history expire; `clear`: fields
   * (stored names) that no longer hold (a redriven child's end, error and cause);
   * `persist`: it runs again (a redrive), its record and history expire no more.
   */
  | {
      op: "childExecution";
      fields: string[];
      mapRun?: string;
      at?: number;
      keepSeconds?: number;
      clear?: string[];
      persist?: boolean;
    }
  | { op: "arm"; member: string; at: number }
  | { op: "disarm"; member: string }
  /** Register a task: called (`call`), polled by an activity worker, or parked on its token. */
  | { op: "task"; task: string; record: string; mode: TaskMode; token?: string; activity?: string }
  /**
   * Register a called task whose record takes the inputs a Map window kept in
   * `ji:<join>`, fields `from .. from + count - 1` (taken out of it), as a JSON array
   * at the record's hole: a Distributed Map's EXPRESS chunk (map-runs/express-chunks.ts).
   */
  | {
      op: "chunkTask";
      task: string;
      record: EventTemplate;
      join: string;
      from: number;
      count: number;
    }
  /** Forget a task; its token answers `why` from now on. */
  | { op: "untask"; task: string; why: "timedout" }
  /**
   * The execution ended (end-execution.ts). `dropRun`: the run's hash and inbox go
   * too (nothing can redrive a success, so its final state is needed no more).
   */
  | ({ op: "end"; dropRun?: boolean } & ExecutionEnd)
  /** This (child) run ended: its keys expire. */
  | { op: "expire"; seconds: number }
  /** The frame input kept apart from the state (`RUN.input`, `RUN.inputVersion`; runtime/payloads/frame-input.ts). */
  | { op: "keepInput"; version: string; input: string }
  | { op: "dropInput" }
  /**
   * This child run ended: keep its output (JSON, "null" unless it succeeded) in
   * `jr:<join>` field `index` and, the first time only, push `event` (ChildEnded)
   * to the parent.
   */
  | {
      op: "joined";
      join: string;
      index: number;
      output: string;
      parent: string;
      event: string;
      keepSeconds: number;
    }
  /** Push `event` (a Stop) in front to each child `<join>/0..started-1` still running; drop `ji:<join>`. */
  | { op: "stopJoin"; join: string; started: number; event: string }
  /**
   * Set these fields of `jr:<join>` where absent: the outputs of children that
   * succeeded before a redrive reopened the join or a fork rebuilt it.
   */
  | {
      op: "keepOutputs";
      join: string;
      outputs: [index: number, output: string][];
      keepSeconds: number;
    }
  /** Keep the inputs of a Map window's later children in `ji:<join>`, fields from, from + 1… */
  | { op: "keepInputs"; join: string; from: number; inputs: string[]; keepSeconds: number }
  /**
   * Put `event` in front of this run's inbox with the join's outputs 0..total-1
   * in order ('null' where missing) as its JSON array, and delete `jr:<join>`.
   */
  | { op: "collect"; join: string; total: number; event: EventTemplate }
  /** Create approval record `ap:<id>` with these fields and index it PENDING (store/lua/approval.ts). */
  | { op: "approval"; id: string; fields: string[] }
  /** A PENDING approval's task ended without a decision. */
  | { op: "closeApproval"; id: string; status: "EXPIRED" | "CANCELLED" }
  /** A PENDING approval's reminder or escalation: its webhook event; escalating, `groups` may decide too. */
  | { op: "noticeApproval"; id: string; event: string; groups: string[] }
  /** Add to the execution's model usage totals (`field`, commit/usage.ts); a decimal text. */
  | { op: "usage"; field: string; amount: string };

/** The Lua type (`type(v)`) a field of TypeScript type `T` arrives as (wire.ts). */
type LuaType<T> = T extends string
  ? "string"
  : T extends number
    ? "number"
    : T extends boolean
      ? "boolean"
      : "table";

/** The keys of `T` that are not optional. */
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];

/** What an op of kind `K` must carry: each of its required fields, with its Lua type. */
type Needs<K extends CommitOp["op"]> = {
  [F in Exclude<RequiredKeys<Extract<CommitOp, { op: K }>>, "op">]: LuaType<
    Extract<CommitOp, { op: K }>[F]
  >;
};

/**
 * Every op kind and the fields it needs, as commitTransition checks them before
 * it writes anything: the types make this table list every kind of `CommitOp`
 * and exactly the required fields of each.
 */
export const COMMIT_OP_NEEDS: { [K in CommitOp["op"]]: Needs<K> } = {
  push: { run: "string", event: "string" },
  spawn: { run: "string", state: "string", started: "string" },
  spawnKept: { run: "string", state: "string", join: "string", index: "number", started: "table" },
  arm: { member: "string", at: "number" },
  disarm: { member: "string" },
  task: { task: "string", record: "string", mode: "string" },
  chunkTask: { task: "string", record: "table", join: "string", from: "number", count: "number" },
  untask: { task: "string", why: "string" },
  end: { exec: "string", status: "string", stoppedAt: "string", keepSeconds: "number" },
  expire: { seconds: "number" },
  keepInput: { version: "string", input: "string" },
  dropInput: {},
  joined: {
    join: "string",
    index: "number",
    output: "string",
    parent: "string",
    event: "string",
    keepSeconds: "number",
  },
  stopJoin: { join: "string", started: "number", event: "string" },
  keepOutputs: { join: "string", outputs: "table", keepSeconds: "number" },
  keepInputs: { join: "string", from: "number", inputs: "table", keepSeconds: "number" },
  collect: { join: "string", total: "number", event: "table" },
  approval: { id: "string", fields: "table" },
  closeApproval: { id: "string", status: "string" },
  noticeApproval: { id: "string", event: "string", groups: "table" },
  usage: { field: "string", amount: "string" },
  childExecution: { fields: "table" },
};

// Keys in brackets: `end` is a Lua keyword.
const NEEDS_LUA = `{${Object.entries(COMMIT_OP_NEEDS)
  .map(
    ([op, needs]) =>
      `['${op}'] = {${Object.entries(needs)
        .map(([field, type]) => `['${field}'] = '${type}'`)
        .join(", ")}}`,
  )
  .join(", ")}}`;

/**
 * Lua helper: checkOps(ops) answers the first thing wrong with a commit's ops (a
 * kind it does not know, a field a kind needs missing or of another type), or
 * nil. commitTransition asks it before its first write: an op it cannot carry out
 * must refuse the whole commit, not stop it half-way (Redis does not roll back
 * what a script wrote before its error).
 */
export const CHECK_OPS_LUA = `
local COMMIT_OPS = ${NEEDS_LUA}
local function checkOps(ops)
  for i, o in ipairs(ops) do
    local needs = type(o) == 'table' and COMMIT_OPS[o.op]
    if not needs then return 'unknown op ' .. tostring(type(o) == 'table' and o.op or o) .. ' (op ' .. i .. ')' end
    for field, kind in pairs(needs) do
      if type(o[field]) ~= kind then
        return 'op ' .. i .. ' (' .. o.op .. '): ' .. field .. ' is ' .. type(o[field]) .. ', not ' .. kind
      end
    end
    -- Optional in the type, needed by this mode: the task joins the activity's list.
    if o.op == 'task' and o.mode == 'activity' and type(o.activity) ~= 'string' then
      return 'op ' .. i .. ' (task): an activity task names no activity'
    end
  end
  return nil
end
`;
