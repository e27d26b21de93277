import { PAUSE_LUA } from "./pause-execution.js";
import type { ScriptSpec } from "./spec.js";
import { STATUS_INDEX_LUA } from "./status-index.js";

/**
 * requestStop: puts a Stop event at the FRONT of the root run's inbox, so it is
 * the next transition (a commit that read another head is refused and re-steps);
 * before the run has taken its Started event, right behind that one. A paused
 * execution is unpaused: a stopping execution's children must report back to it.
 *
 * KEYS[1] execution hash, KEYS[2] root run hash, KEYS[3] root run inbox, KEYS[4] schedule zset
 * ARGV[1] Stop event JSON, ARGV[2] root run (short id), ARGV[3] lease deadline (ms), ARGV[4] key base
 * Returns {1, seq} queued; {0} the execution is not running; {-1} no such execution.
 */
export const requestStop: ScriptSpec = {
  name: "requestStop",
  keys: 4,
  lua: `${STATUS_INDEX_LUA}${PAUSE_LUA}
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {-1} end
if st ~= 'RUNNING' then return {0} end
unpause(ARGV[4], KEYS[1], ARGV[2])
local q = redis.call('HGET', KEYS[2], 'q')
if q == '0' then
  -- Started is still waiting: a Stop before it would find no state to stop and be
  -- lost, so it goes right after it (everything else the run queues comes later).
  redis.call('RPUSH', KEYS[3], ARGV[1])
else
  redis.call('LPUSH', KEYS[3], ARGV[1])
end
redis.call('ZADD', KEYS[4], ARGV[3], 'r:' .. ARGV[2])
return {1, tonumber(q)}
`,
};
