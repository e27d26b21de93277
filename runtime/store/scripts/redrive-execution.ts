import { RUN_STATE_LUA } from "../lua/run-state.js";
import { CREATE_RUNS_LUA, type CreatedRun } from "./start-execution.js";
import { STATUS_INDEX_LUA } from "../lua/status-index.js";
import { defineScript } from "../lua/spec.js";

export interface RedriveArgs {
  base: string;
  /** The execution (short id). */
  exec: string;
  /** The Redriven event for its top level (JSON). */
  event: string;
  leaseUntil: number;
  /** The status and redrive count it was read with (fences). */
  status: string;
  redriveCount: number;
  clientToken?: string;
  /** ISO time. */
  now: string;
  /**
   * The execution timeout, armed again: AWS resets the state machine's
   * TimeoutSeconds on a redrive ("reset to 0").
   */
  timeout?: { member: string; at: number };
  /**
   * The Map iterations and Parallel branches redriven in place (engine/redrive.ts),
   * created idle: the top level's Redriven step wakes them.
   */
  runs?: CreatedRun[];
}

export type RedriveReply =
  | { kind: "redriven"; seq: number }
  /** The same client token redrove it already. */
  | { kind: "again" }
  /** It changed since it was read: read again. */
  | { kind: "raced" }
  | { kind: "missing" };

/**
 * redriveExecution: an ended execution (FAILED, TIMED_OUT, ABORTED) runs again
 * (runtime/executions/redrive.ts): RUNNING once more, kept past its retention again, its
 * redrive counted, and the Redriven event (built in TypeScript: the state to enter
 * again and its input) queued for its top level, whose next step writes
 * ExecutionRedriven and enters that state.
 */
export const redriveExecution = defineScript<RedriveArgs, RedriveReply>()({
  name: "redriveExecution",
  keys: ["execution", "run", "inbox", "history", "journal", "schedule", "stats"],
  replies: ["redriven", "again", "raced", "missing"],
  helpers: [RUN_STATE_LUA, STATUS_INDEX_LUA, CREATE_RUNS_LUA],
  lua: `
local f = hmgetNamed(KEY.execution, EXEC, {'status', 'redriveCount', 'redriveToken'})
if not f.status then return reply('missing') end
if ARG.clientToken and f.redriveToken == ARG.clientToken then return reply('again') end
if f.status ~= ARG.status or tonumber(f.redriveCount or '0') ~= ARG.redriveCount then
  return reply('raced')
end
local q = redis.call('HGET', KEY.run, RUN.seq)
if not q then return reply('missing') end
redis.call('HSET', KEY.execution, EXEC.status, 'RUNNING', EXEC.redriveCount, ARG.redriveCount + 1,
  EXEC.redrivenAt, ARG.now, EXEC.redriveToken, ARG.clientToken or '')
redis.call('HDEL', KEY.execution, EXEC.stoppedAt, EXEC.output, EXEC.error, EXEC.cause)
for _, key in ipairs({KEY.execution, KEY.run, KEY.inbox, KEY.history, KEY.journal,
    ARG.base .. KIND.payloads .. ARG.exec}) do
  redis.call('PERSIST', key)
end
redis.call('HINCRBY', KEY.stats, f.status, -1)
redis.call('HINCRBY', KEY.stats, 'RUNNING', 1)
moveStatusIndex(ARG.base, ARG.exec, f.status, 'RUNNING')
if ARG.timeout and redis.call('ZADD', KEY.schedule, ARG.timeout.at, ARG.timeout.member) == 1 then
  redis.call('HINCRBY', KEY.stats, STATS.timers, 1)
end
createRuns(ARG.base, ARG.runs)
redis.call('RPUSH', KEY.inbox, ARG.event)
redis.call('ZADD', KEY.schedule, ARG.leaseUntil, MEMBER.run .. ARG.exec)
return reply('redriven', {seq = tonumber(q)})
`,
});
