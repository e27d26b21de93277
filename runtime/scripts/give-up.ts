import { END_EXECUTION_LUA } from "./end-execution.js";
import type { ScriptSpec } from "./spec.js";

/**
 * giveUp: a run's transition job failed every attempt (runtime/give-up.ts).
 *
 * The first time an execution is given up on, it is asked to fail itself the
 * ordinary way: a Stop (FAILED, States.Runtime) goes in front of its root run's
 * inbox, as `requestStop` does, so the step writes the history, cancels timers
 * and tasks and stops the children. If that does not help either (the fault is
 * in the root run itself, or a run keeps failing after the stop), it is ended
 * here without the step: status FAILED, the ExecutionFailed event the caller
 * built (fenced by the history count and chain head, as a commit is), and the runs that cannot
 * advance are deleted so that nothing enqueues them again.
 *
 * KEYS[1] execution hash   KEYS[4] schedule zset   KEYS[7] history list
 * KEYS[2] root run hash    KEYS[5] run hash        KEYS[8] journal list
 * KEYS[3] root run inbox   KEYS[6] run inbox
 * ARGV[1] key base, ARGV[2] root run (short id), ARGV[3] run (short id),
 * ARGV[4] Stop event JSON, ARGV[5] lease deadline (ms), ARGV[6] expected history
 * count, ARGV[7] ExecutionFailed event (stored form, id = count + 1), ARGV[8]
 * error, ARGV[9] cause, ARGV[10] stoppedAt, ARGV[11] execution timeout member,
 * ARGV[12] keepSeconds, ARGV[13] expected history head hash (hh, read with the
 * count), ARGV[14] the new head hash (ExecutionFailed's, runtime/audit/chain.ts)
 *
 * Replies: {'stopping', rootSeq} a Stop was queued (the caller commits it);
 * {'ended'} the execution was ended here; {'dropped'} it had ended already, the
 * run was deleted; {'raced', hc} history moved meanwhile (build the event again);
 * {'missing'} no such execution.
 */
export const giveUp: ScriptSpec = {
  name: "giveUp",
  keys: 8,
  lua: `${END_EXECUTION_LUA}
local base, root, run = ARGV[1], ARGV[2], ARGV[3]
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'missing'} end
local tries = tonumber(redis.call('HGET', KEYS[1], 'gu') or '0') + 1
local function drop(short, hashKey, inboxKey)
  redis.call('DEL', hashKey, inboxKey)
  redis.call('ZREM', KEYS[4], 'r:' .. short)
end
if st == 'RUNNING' and tries == 1 then
  local q = redis.call('HGET', KEYS[2], 'q')
  if q then
    redis.call('HSET', KEYS[1], 'gu', tries)
    redis.call('HINCRBY', base .. 'stats', 'poisoned', 1)
    if q == '0' then
      redis.call('RPUSH', KEYS[3], ARGV[4])
    else
      redis.call('LPUSH', KEYS[3], ARGV[4])
    end
    redis.call('ZADD', KEYS[4], ARGV[5], 'r:' .. root)
    return {'stopping', tonumber(q)}
  end
end
if st == 'RUNNING' then
  local x = redis.call('HMGET', KEYS[1], 'hc', 'hh')
  local hc = x[1] or '0'
  if hc ~= ARGV[6] or (x[2] or '') ~= ARGV[13] then return {'raced', tonumber(hc)} end
  if tries == 1 then redis.call('HINCRBY', base .. 'stats', 'poisoned', 1) end
  redis.call('HSET', KEYS[1], 'gu', tries, 'hc', tonumber(hc) + 1, 'hh', ARGV[14])
  redis.call('RPUSH', KEYS[7], ARGV[7])
  endExecution(base, KEYS[1], KEYS[4], root, 'FAILED', '', ARGV[8], ARGV[9], ARGV[10], ARGV[11],
    ARGV[12], {KEYS[1], KEYS[7], KEYS[8]})
  drop(root, KEYS[2], KEYS[3])
  drop(run, KEYS[5], KEYS[6])
  return {'ended'}
end
redis.call('HSET', KEYS[1], 'gu', tries)
drop(run, KEYS[5], KEYS[6])
return {'dropped'}
`,
};
