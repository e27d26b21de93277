import { STATUS_INDEX_LUA } from "./status-index.js";
import type { ScriptSpec } from "./spec.js";

/**
 * Pausing an execution (runtime/pause.ts). A paused execution keeps status
 * RUNNING in its record (`st`: everything that ends, stops or waits for it reads
 * that) and carries `ps`, the pause (JSON: reason, caller, time); the API reports
 * it as PAUSED and it moves to the PAUSED status index. Its runs stop taking
 * events: a transition job that finds `ps` parks its run in `pz:<exec>` and
 * leaves the inbox as it is (timers that fire, task results and callbacks keep
 * arriving there, in order). Resuming appends ExecutionResumed and re-enqueues
 * every parked run, so the inboxes are applied in the order they arrived.
 *
 * A Stop (the API's stop, the execution's timeout, a give-up) unpauses first: an
 * execution that is stopping must let its children report back to it.
 *
 * History events are built and chained (runtime/audit/chain.ts) in TypeScript and
 * fenced by the history count and chain head `hh`, as a commit is: a reply
 * 'raced' means read both again and build them again.
 */
export const PAUSE_LUA = `
local function unpause(base, execKey, exec)
  if redis.call('HDEL', execKey, 'ps') == 0 then return false end
  redis.call('HINCRBY', base .. 'stats', 'PAUSED', -1)
  redis.call('HINCRBY', base .. 'stats', 'RUNNING', 1)
  moveStatusIndex(base, exec, 'PAUSED', 'RUNNING')
  redis.call('DEL', base .. 'pz:' .. exec)
  return true
end
`;

/**
 * KEYS[1] execution hash, KEYS[2] history list, KEYS[3] journal
 * ARGV[1] key base, ARGV[2] execution (short id), ARGV[3] expected history count,
 * ARGV[4] ExecutionPaused event (stored form, id = count + 1), ARGV[5] the pause (JSON),
 * ARGV[6] the journal entry of the Paused event (stored form: replay writes the same event),
 * ARGV[7] expected history head hash (hh), ARGV[8] the new head hash (the event's)
 * Replies: {'paused'}; {'already'} it was paused; {'ended', status}; {'raced', hc}; {'missing'}.
 */
export const pauseExecution: ScriptSpec = {
  name: "pauseExecution",
  keys: 3,
  lua: `${STATUS_INDEX_LUA}
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'missing'} end
if st ~= 'RUNNING' then return {'ended', st} end
if redis.call('HEXISTS', KEYS[1], 'ps') == 1 then return {'already'} end
local x = redis.call('HMGET', KEYS[1], 'hc', 'hh')
local hc = x[1] or '0'
if hc ~= ARGV[3] or (x[2] or '') ~= ARGV[7] then return {'raced', tonumber(hc)} end
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('RPUSH', KEYS[3], ARGV[6])
redis.call('HSET', KEYS[1], 'hc', tonumber(hc) + 1, 'ps', ARGV[5], 'hh', ARGV[8])
redis.call('HINCRBY', ARGV[1] .. 'stats', 'RUNNING', -1)
redis.call('HINCRBY', ARGV[1] .. 'stats', 'PAUSED', 1)
moveStatusIndex(ARGV[1], ARGV[2], 'RUNNING', 'PAUSED')
return {'paused'}
`,
};

/**
 * KEYS[1] execution hash, KEYS[2] history list, KEYS[3] parked runs set, KEYS[4] schedule zset,
 * KEYS[5] journal
 * ARGV[1] key base, ARGV[2] execution (short id), ARGV[3] expected history count,
 * ARGV[4] ExecutionResumed event (stored form), ARGV[5] lease deadline (ms),
 * ARGV[6] the journal entry of the Resumed event (stored form),
 * ARGV[7] expected history head hash (hh), ARGV[8] the new head hash (the event's)
 * Replies: {'resumed', job...} with `s<run>@<seq>` per parked run that has events
 * (each also gets a lease, so a crash before the enqueue delays it, never loses it);
 * {'notPaused'}; {'ended', status}; {'raced', hc}; {'missing'}.
 */
export const resumeExecution: ScriptSpec = {
  name: "resumeExecution",
  keys: 5,
  lua: `${STATUS_INDEX_LUA}${PAUSE_LUA}
local base = ARGV[1]
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'missing'} end
if st ~= 'RUNNING' then return {'ended', st} end
if redis.call('HEXISTS', KEYS[1], 'ps') == 0 then return {'notPaused'} end
local x = redis.call('HMGET', KEYS[1], 'hc', 'hh')
local hc = x[1] or '0'
if hc ~= ARGV[3] or (x[2] or '') ~= ARGV[7] then return {'raced', tonumber(hc)} end
local parked = redis.call('SMEMBERS', KEYS[3])
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('RPUSH', KEYS[5], ARGV[6])
redis.call('HSET', KEYS[1], 'hc', tonumber(hc) + 1, 'hh', ARGV[8])
unpause(base, KEYS[1], ARGV[2])
local out = {'resumed'}
for _, run in ipairs(parked) do
  local q = redis.call('HGET', base .. 'r:' .. run, 'q')
  if q and redis.call('LLEN', base .. 'i:' .. run) > 0 then
    redis.call('ZADD', KEYS[4], ARGV[5], 'r:' .. run)
    out[#out + 1] = 's' .. run .. '@' .. q
  end
end
return out
`,
};

/**
 * parkPaused: a transition job found its execution paused. Atomically with that
 * check, its run joins the parked set (and its lease goes: resuming re-enqueues
 * it); had the execution been resumed meanwhile, the job goes on instead.
 *
 * KEYS[1] execution hash, KEYS[2] parked runs set, KEYS[3] schedule zset
 * ARGV[1] run (short id)
 * Replies: {'parked'} or {'running'}.
 */
export const parkPaused: ScriptSpec = {
  name: "parkPaused",
  keys: 3,
  lua: `
if redis.call('HEXISTS', KEYS[1], 'ps') == 0 then return {'running'} end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], 'r:' .. ARGV[1])
return {'parked'}
`,
};
