import { END_EXECUTION_LUA, type ExecutionEnd } from "../lua/end-execution.js";
import { defineScript } from "../lua/spec.js";

export interface GiveUpArgs {
  base: string;
  /** The root run (= the execution, short id) and the run whose job failed. */
  root: string;
  run: string;
  /** The Stop (FAILED, States.Runtime) asked of the root run the first time (JSON). */
  stop: string;
  leaseUntil: number;
  /** The ExecutionFailed event (stored form, id = historyCount + 1), for a forced end. */
  failed: string;
  historyCount: number;
  historyHead: string;
  /** ExecutionFailed's hash: the chain head after it (runtime/audit/chain.ts). */
  newHistoryHead: string;
  /** The forced end. */
  end: ExecutionEnd;
}

export type GiveUpReply =
  /** A Stop was queued at the root run's `seq` (the caller commits it). */
  | { kind: "stopping"; seq: number }
  /** The execution was ended here. */
  | { kind: "ended" }
  /** It had ended already: the run was deleted. */
  | { kind: "dropped" }
  /** History moved meanwhile: build the event again. */
  | { kind: "raced" }
  | { kind: "missing" };

/**
 * giveUp: a run's transition job failed every attempt (runtime/commit/give-up.ts).
 *
 * The first time an execution is given up on, it is asked to fail itself the
 * ordinary way: a Stop (FAILED, States.Runtime) goes in front of its root run's
 * inbox, as `requestStop` does, so the step writes the history, cancels timers
 * and tasks and stops the children. If that does not help either (the fault is
 * in the root run itself, or a run keeps failing after the stop), it is ended
 * here without the step: status FAILED, the ExecutionFailed event the caller
 * built (fenced by the history count and chain head, as a commit is), and the
 * runs that cannot advance are deleted so that nothing enqueues them again.
 */
export const giveUp = defineScript<GiveUpArgs, GiveUpReply>()({
  name: "giveUp",
  keys: ["execution", "rootRun", "rootInbox", "schedule", "run", "inbox", "history", "journal"],
  replies: ["stopping", "ended", "dropped", "raced", "missing"],
  helpers: [END_EXECUTION_LUA],
  lua: `
local base = ARG.base
local st = redis.call('HGET', KEY.execution, EXEC.status)
if not st then return reply('missing') end
local tries = tonumber(redis.call('HGET', KEY.execution, EXEC.givenUp) or '0') + 1
local function drop(short, hashKey, inboxKey)
  redis.call('DEL', hashKey, inboxKey)
  redis.call('ZREM', KEY.schedule, MEMBER.run .. short)
end
if st == 'RUNNING' and tries == 1 then
  local q = redis.call('HGET', KEY.rootRun, RUN.seq)
  if q then
    redis.call('HSET', KEY.execution, EXEC.givenUp, tries)
    redis.call('HINCRBY', base .. KIND.stats, STATS.givenUp, 1)
    if q == '0' then
      redis.call('RPUSH', KEY.rootInbox, ARG.stop)
    else
      redis.call('LPUSH', KEY.rootInbox, ARG.stop)
    end
    redis.call('ZADD', KEY.schedule, ARG.leaseUntil, MEMBER.run .. ARG.root)
    return reply('stopping', {seq = tonumber(q)})
  end
end
if st == 'RUNNING' then
  local x = hmgetNamed(KEY.execution, EXEC, {'historyCount', 'historyHead'})
  local hc = tonumber(x.historyCount or '0')
  if hc ~= ARG.historyCount or (x.historyHead or '') ~= ARG.historyHead then return reply('raced') end
  if tries == 1 then redis.call('HINCRBY', base .. KIND.stats, STATS.givenUp, 1) end
  redis.call('HSET', KEY.execution, EXEC.givenUp, tries, EXEC.historyCount, hc + 1,
    EXEC.historyHead, ARG.newHistoryHead)
  redis.call('RPUSH', KEY.history, ARG.failed)
  endExecution(base, KEY.execution, KEY.schedule, ARG['end'], {KEY.execution, KEY.history, KEY.journal})
  drop(ARG.root, KEY.rootRun, KEY.rootInbox)
  drop(ARG.run, KEY.run, KEY.inbox)
  return reply('ended')
end
redis.call('HSET', KEY.execution, EXEC.givenUp, tries)
drop(ARG.run, KEY.run, KEY.inbox)
return reply('dropped')
`,
});
