import { STATUS_INDEX_LUA } from "../lua/status-index.js";
import { defineScript } from "../lua/spec.js";
import { PAUSE_LUA } from "../lua/pause.js";

/**
 * Pausing an execution (runtime/executions/pause.ts). A paused execution keeps status
 * RUNNING in its record (`EXEC.status`: everything that ends, stops or waits for
 * it reads that) and carries `EXEC.pause`, the pause (JSON: reason, caller, time);
 * the API reports it as PAUSED and it moves to the PAUSED status index. Its runs
 * stop taking events: a transition job that finds the pause parks its run in
 * `pz:<exec>` and leaves the inbox as it is (timers that fire, task results and callbacks keep
 * arriving there, in order). Resuming appends ExecutionResumed and re-enqueues
 * every parked run, so the inboxes are applied in the order they arrived.
 *
 * A Stop (the API's stop, the execution's timeout, a give-up) unpauses first: an
 * execution that is stopping must let its children report back to it.
 *
 * History events are built and chained (runtime/audit/chain.ts) in TypeScript and
 * fenced by the history count and chain head, as a commit is.
 */

/** An operator's event (ExecutionPaused / ExecutionResumed), fenced as a commit's history is. */
interface OperatorEventArgs {
  base: string;
  /** The execution (short id). */
  exec: string;
  /** The history event (stored form, id = historyCount + 1) and its journal entry (stored form). */
  event: string;
  journal: string;
  historyCount: number;
  historyHead: string;
  /** The event's hash: the chain head after it. */
  newHistoryHead: string;
}

type OperatorReply =
  | { kind: "ended"; status: string }
  /** History moved since it was read: read the head again and build the event again. */
  | { kind: "raced" }
  | { kind: "missing" };

export type PauseArgs = OperatorEventArgs & {
  /** The pause (JSON: reason, caller, time), kept in the record (`EXEC.pause`). */
  pause: string;
};
export type PauseReply = { kind: "paused" } | { kind: "already" } | OperatorReply;

export type ResumeArgs = OperatorEventArgs & { leaseUntil: number };
/** `jobs`: the transition of every parked run that has events (each with a lease, so a crash before the enqueue delays it, never loses it). */
export type ResumeReply =
  { kind: "resumed"; jobs: string[] } | { kind: "notPaused" } | OperatorReply;

/** The fence and append both share; the caller returns when it yields a reply. */
const APPEND_OPERATOR_EVENT_LUA = `
local function operatorFence()
  local st = redis.call('HGET', KEY.execution, EXEC.status)
  if not st then return reply('missing') end
  if st ~= 'RUNNING' then return reply('ended', {status = st}) end
  local x = hmgetNamed(KEY.execution, EXEC, {'historyCount', 'historyHead'})
  if tonumber(x.historyCount or '0') ~= ARG.historyCount or (x.historyHead or '') ~= ARG.historyHead then
    return reply('raced')
  end
  return nil
end
local function appendOperatorEvent()
  redis.call('RPUSH', KEY.history, ARG.event)
  redis.call('RPUSH', KEY.journal, ARG.journal)
  redis.call('HSET', KEY.execution, EXEC.historyCount, ARG.historyCount + 1,
    EXEC.historyHead, ARG.newHistoryHead)
end
`;

export const pauseExecution = defineScript<PauseArgs, PauseReply>()({
  name: "pauseExecution",
  keys: ["execution", "history", "journal"],
  replies: ["paused", "already", "ended", "raced", "missing"],
  helpers: [STATUS_INDEX_LUA],
  lua: `${APPEND_OPERATOR_EVENT_LUA}
local refused = operatorFence()
if refused then return refused end
if redis.call('HEXISTS', KEY.execution, EXEC.pause) == 1 then return reply('already') end
appendOperatorEvent()
redis.call('HSET', KEY.execution, EXEC.pause, ARG.pause)
redis.call('HINCRBY', ARG.base .. KIND.stats, 'RUNNING', -1)
redis.call('HINCRBY', ARG.base .. KIND.stats, 'PAUSED', 1)
moveStatusIndex(ARG.base, ARG.exec, 'RUNNING', 'PAUSED')
return reply('paused')
`,
});

export const resumeExecution = defineScript<ResumeArgs, ResumeReply>()({
  name: "resumeExecution",
  keys: ["execution", "history", "parked", "schedule", "journal"],
  replies: ["resumed", "notPaused", "ended", "raced", "missing"],
  helpers: [STATUS_INDEX_LUA, PAUSE_LUA],
  lua: `${APPEND_OPERATOR_EVENT_LUA}
local base = ARG.base
local refused = operatorFence()
if refused then return refused end
if redis.call('HEXISTS', KEY.execution, EXEC.pause) == 0 then return reply('notPaused') end
local parked = redis.call('SMEMBERS', KEY.parked)
appendOperatorEvent()
unpause(base, KEY.execution, ARG.exec)
local jobs = {}
for _, run in ipairs(parked) do
  local q = redis.call('HGET', base .. KIND.run .. run, RUN.seq)
  if q and redis.call('LLEN', base .. KIND.inbox .. run) > 0 then
    redis.call('ZADD', KEY.schedule, ARG.leaseUntil, MEMBER.run .. run)
    jobs[#jobs + 1] = stepJob(run, q)
  end
end
return reply('resumed', {jobs = jobs})
`,
});

export type ParkReply = { kind: "parked" } | { kind: "running" };

/**
 * parkPaused: a transition job found its execution paused. Atomically with that
 * check, its run joins the parked set (and its lease goes: resuming re-enqueues
 * it); had the execution been resumed meanwhile, the job goes on instead.
 */
export const parkPaused = defineScript<{ run: string }, ParkReply>()({
  name: "parkPaused",
  keys: ["execution", "parked", "schedule"],
  replies: ["parked", "running"],
  lua: `
if redis.call('HEXISTS', KEY.execution, EXEC.pause) == 0 then return reply('running') end
redis.call('SADD', KEY.parked, ARG.run)
redis.call('ZREM', KEY.schedule, MEMBER.run .. ARG.run)
return reply('parked')
`,
});
