import type { ExecutionField } from "../fields.js";
import { STATUS_INDEX_LUA } from "../lua/status-index.js";
import { defineScript } from "../lua/spec.js";
import { LOAD_LUA, type LoadSnapshot } from "./load-transition.js";

/** A run created idle beside others, with its state (stored form) and first event (JSON). */
export interface CreatedRun {
  /** Short id. */
  run: string;
  state: string;
  event: string;
  /** A Distributed Map's child execution (short id) whose history the run writes (`RUN.historyOwner`). */
  owner?: string;
}

/** Creates the runs idle: the root's first step wakes them (engine/flow/fork-resume.ts). */
export const CREATE_RUNS_LUA = `
local function createRuns(base, runs)
  for _, r in ipairs(runs or {}) do
    local key = base .. KIND.run .. r.run
    putState(key, r.state, nil, r.owner and {RUN.seq, 0, RUN.historyOwner, r.owner} or {RUN.seq, 0})
    redis.call('RPUSH', base .. KIND.inbox .. r.run, r.event)
  end
end
`;

export interface StartArgs {
  base: string;
  /** The execution (short id) and its name. */
  exec: string;
  name: string;
  machine: string;
  version: number;
  /** JSON text, or a reference to it in `payloads` (runtime/payloads/history-payloads.ts). */
  input: string;
  /** Large JSON texts stored once (SHA-256 hex → stored text). */
  payloads?: Record<string, string>;
  /** What makes a second start with the same name the same start (runtime/executions/execution-store.ts). */
  inputHash: string;
  startedAt: string;
  /** startedAt in ms: the execution's score in the status indexes. */
  startedMs: number;
  /** Now (ms): the lease counts from it (a start may be dated earlier, a schedule's tick). */
  now: number;
  leaseMs: number;
  /** The root run's state (stored form) and its first event. */
  state: string;
  started: string;
  /** The execution timeout's schedule member and due time, when it has one. */
  timeout?: { member: string; at: number };
  /** The history chain's genesis hash (runtime/audit/chain.ts): the chain head until the first event. */
  genesis: string;
  /** Its check (chain.ts `eventCheck`), kept as `EXEC.genesisCheck`: the export recomputes the genesis and compares. */
  genesisCheck: string;
  /**
   * More fields of the record, by name (fields.ts): its trace, pinned version or
   * alias, budget, origin (runtime/executions/execution-store.ts).
   */
  record?: Partial<Record<ExecutionField, string | number>>;
  /** A fork's other runs (runtime/executions/fork.ts), created with the execution. */
  runs?: CreatedRun[];
  /**
   * A worker in this process takes the new run at once (execution-store.ts
   * `advanceHere`): answer the root run's snapshot, with these fields of the
   * record (commit/execution-cache.ts `RECORD_FIELDS`), as a claim does
   * (claim-due.ts), so that its first transition needs no load.
   */
  snapshot?: { recordFields: readonly ExecutionField[] };
}

export type StartReply =
  | { kind: "created"; startedAt: string; loaded?: LoadSnapshot }
  /** The same name with the same input: the existing execution. */
  | { kind: "existed"; startedAt: string }
  | { kind: "conflict" };

/**
 * startExecution: creates an execution, its root run and its first event, once.
 * Idempotent by name: the same name with the same input hash is the existing execution.
 */
export const startExecution = defineScript<StartArgs, StartReply>()({
  name: "startExecution",
  keys: ["execution", "payloads", "run", "inbox", "schedule", "stats"],
  replies: ["created", "existed", "conflict"],
  helpers: [LOAD_LUA, STATUS_INDEX_LUA, CREATE_RUNS_LUA],
  lua: `
local existing = hmgetNamed(KEY.execution, EXEC, {'inputHash', 'startedAt'})
if existing.inputHash then
  if existing.inputHash == ARG.inputHash then
    return reply('existed', {startedAt = existing.startedAt})
  end
  return reply('conflict')
end
redis.call('HSET', KEY.execution, EXEC.status, 'RUNNING', EXEC.machine, ARG.machine,
  EXEC.version, ARG.version, EXEC.input, ARG.input, EXEC.inputHash, ARG.inputHash,
  EXEC.startedAt, ARG.startedAt, EXEC.historyCount, 0, EXEC.name, ARG.name,
  EXEC.historyHead, ARG.genesis, EXEC.genesisCheck, ARG.genesisCheck)
hsetNamed(KEY.execution, EXEC, ARG.record or {})
for hash, text in pairs(ARG.payloads or {}) do redis.call('HSETNX', KEY.payloads, hash, text) end
putState(KEY.run, ARG.state, nil, {RUN.seq, 0})
redis.call('RPUSH', KEY.inbox, ARG.started)
redis.call('HINCRBY', KEY.stats, 'RUNNING', 1)
moveStatusIndex(ARG.base, ARG.exec, '', 'RUNNING', ARG.startedMs)
redis.call('ZADD', KEY.schedule, ARG.now + ARG.leaseMs, MEMBER.run .. ARG.exec)
createRuns(ARG.base, ARG.runs)
if ARG.timeout and redis.call('ZADD', KEY.schedule, ARG.timeout.at, ARG.timeout.member) == 1 then
  redis.call('HINCRBY', KEY.stats, STATS.timers, 1)
end
local loaded = nil
if ARG.snapshot then
  loaded = loadedOf(ARG.base, KEY.run, KEY.execution, readRun(KEY.run), ARG.started, nil,
    ARG.snapshot.recordFields)
end
return reply('created', {startedAt = ARG.startedAt, loaded = loaded})
`,
});
