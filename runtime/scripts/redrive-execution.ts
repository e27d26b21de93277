import { RUN_STATE_LUA } from "./run-state.js";
import { STATUS_INDEX_LUA } from "./status-index.js";
import type { ScriptSpec } from "./spec.js";

/**
 * redriveExecution: an ended execution (FAILED, TIMED_OUT, ABORTED) runs again
 * (runtime/redrive.ts): RUNNING once more, kept past its retention again, its
 * redrive counted, and the Redriven event (built in TypeScript: the state to enter
 * again and its input) queued for its top level, whose next step writes
 * ExecutionRedriven and enters that state.
 *
 * KEYS[1] execution hash  KEYS[3] root run inbox  KEYS[5] journal  KEYS[7] stats hash
 * KEYS[2] root run hash   KEYS[4] history         KEYS[6] schedule zset
 * ARGV[1] key base, ARGV[2] execution (short id), ARGV[3] Redriven event JSON,
 * ARGV[4] lease deadline (ms), ARGV[5] the status it was read with, ARGV[6] the
 * redrive count it was read with, ARGV[7] client token ('' = none), ARGV[8] now (ISO)
 * ARGV[9] the execution timeout's timer member ('' = none), ARGV[10] when it fires (ms):
 * AWS resets the state machine's TimeoutSeconds on a redrive ("reset to 0")
 * ARGV[11..] the Map iterations and Parallel branches redriven in place (engine/redrive.ts),
 * three values each: the run (short id), its state, its first event (`Restored`);
 * created idle: the top level's Redriven step wakes them
 *
 * Replies: {'redriven', rootSeq}; {'again'} the same client token redrove it already;
 * {'raced'} it changed since it was read (read again); {'missing'}.
 */
export const redriveExecution: ScriptSpec = {
  name: "redriveExecution",
  keys: 7,
  lua: `${RUN_STATE_LUA}${STATUS_INDEX_LUA}
local base, exec = ARGV[1], ARGV[2]
local f = redis.call('HMGET', KEYS[1], 'st', 'rc', 'rt')
if not f[1] then return {'missing'} end
if ARGV[7] ~= '' and f[3] == ARGV[7] then return {'again'} end
if f[1] ~= ARGV[5] or (f[2] or '0') ~= ARGV[6] then return {'raced'} end
local q = redis.call('HGET', KEYS[2], 'q')
if not q then return {'missing'} end
redis.call('HSET', KEYS[1], 'st', 'RUNNING', 'rc', tonumber(ARGV[6]) + 1, 'rd', ARGV[8], 'rt', ARGV[7])
redis.call('HDEL', KEYS[1], 't1', 'out', 'err', 'cause')
for k = 1, 5 do redis.call('PERSIST', KEYS[k]) end
redis.call('HINCRBY', KEYS[7], f[1], -1)
redis.call('HINCRBY', KEYS[7], 'RUNNING', 1)
moveStatusIndex(base, exec, f[1], 'RUNNING')
if ARGV[9] ~= '' and redis.call('ZADD', KEYS[6], ARGV[10], ARGV[9]) == 1 then
  redis.call('HINCRBY', KEYS[7], 'timers', 1)
end
for k = 11, #ARGV, 3 do
  local run = base .. 'r:' .. ARGV[k]
  redis.call('HSET', run, 'q', 0)
  putState(run, ARGV[k + 1])
  redis.call('RPUSH', base .. 'i:' .. ARGV[k], ARGV[k + 2])
end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('ZADD', KEYS[6], ARGV[4], 'r:' .. exec)
return {'redriven', tonumber(q)}
`,
};
