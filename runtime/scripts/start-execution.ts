import { RUN_STATE_LUA } from "./run-state.js";
import { STATUS_INDEX_LUA } from "./status-index.js";
import type { ScriptSpec } from "./spec.js";

/**
 * startExecution: creates an execution, its root run and its first event, once.
 * Idempotent by name: the same name with the same input hash returns the existing
 * execution.
 *
 * KEYS[1] execution hash   KEYS[4] executions zset
 * KEYS[2] root run hash    KEYS[5] executions-of-machine zset
 * KEYS[3] root run inbox   KEYS[6] schedule zset   KEYS[7] stats hash
 *
 * ARGV[1] exec (short id)  ARGV[2] input hash   ARGV[3] machine   ARGV[4] version
 * ARGV[5] input JSON       ARGV[6] startedAt ISO ARGV[7] start ms  ARGV[8] lease ms
 * ARGV[9] root run state   ARGV[10] Started event   ARGV[11] timeout member ('' = none)
 * ARGV[12] timeout at ms   ARGV[13] execution name ARGV[14] key base
 * ARGV[15] the history chain's genesis hash (runtime/audit/chain.ts): the record's
 *          chain head `hh` until the first event, and kept as `hg`
 * ARGV[16..] a fork's other runs (runtime/fork.ts), three values each: the run (short
 *          id), its state, its first event (`Restored`); created with the execution,
 *          idle: the root's first step wakes them (engine/flow/fork-resume.ts)
 *
 * Returns {1, startedAt} created; {0, startedAt} existed with the same input;
 *         {-1} existed with another input.
 */
export const startExecution: ScriptSpec = {
  name: "startExecution",
  keys: 7,
  lua: `${RUN_STATE_LUA}${STATUS_INDEX_LUA}
local existing = redis.call('HMGET', KEYS[1], 'ih', 't0')
if existing[1] then
  if existing[1] == ARGV[2] then return {0, existing[2]} end
  return {-1}
end
redis.call('HSET', KEYS[1], 'st', 'RUNNING', 'sm', ARGV[3], 'v', ARGV[4], 'in', ARGV[5],
  'ih', ARGV[2], 't0', ARGV[6], 'hc', 0, 'nm', ARGV[13], 'hh', ARGV[15], 'hg', ARGV[15])
redis.call('HSET', KEYS[2], 'q', 0)
putState(KEYS[2], ARGV[9])
redis.call('RPUSH', KEYS[3], ARGV[10])
redis.call('HINCRBY', KEYS[7], 'RUNNING', 1)
redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[7], ARGV[1])
moveStatusIndex(ARGV[14], ARGV[1], '', 'RUNNING')
redis.call('ZADD', KEYS[6], tonumber(ARGV[7]) + tonumber(ARGV[8]), 'r:' .. ARGV[1])
for k = 16, #ARGV, 3 do
  local run = ARGV[14] .. 'r:' .. ARGV[k]
  redis.call('HSET', run, 'q', 0)
  putState(run, ARGV[k + 1])
  redis.call('RPUSH', ARGV[14] .. 'i:' .. ARGV[k], ARGV[k + 2])
end
if ARGV[11] ~= '' and redis.call('ZADD', KEYS[6], ARGV[12], ARGV[11]) == 1 then
  redis.call('HINCRBY', KEYS[7], 'timers', 1)
end
return {1, ARGV[6]}
`,
};
