import { PAUSE_LUA } from "./pause-execution.js";
import type { ScriptSpec } from "./spec.js";
import { STATUS_INDEX_LUA } from "./status-index.js";

/**
 * claimDue: hands the due entries of the schedule to exactly one worker.
 *  - `t:<run>#<timer>`: a timer fired. Its event goes into the run's inbox (the
 *    execution timeout `#timeout` becomes Stop{TIMED_OUT}, in front of the inbox of
 *    a paused execution, which it unpauses); the member is removed.
 *  - `r:<run>` / `k:<task>`: a lease ran out before the job that should exist was
 *    seen to finish (a process died between a commit and its enqueue). If the run
 *    still has events (the task is still pending) the lease is renewed and the
 *    job is handed back to be (re-)enqueued; enqueueing an existing job id is a
 *    no-op. Otherwise the lease is dropped.
 *
 * KEYS[1] schedule zset, KEYS[2] tasks hash
 * ARGV[1] key base, ARGV[2] now (ms), ARGV[3] max entries, ARGV[4] lease (ms), ARGV[5] execution ARN prefix
 *
 * Returns {nextDueMs or '', job...}: `s<run>@<seq>` (transition) or `k<task>` (task call).
 */
export const claimDue: ScriptSpec = {
  name: "claimDue",
  keys: 2,
  lua: `${STATUS_INDEX_LUA}${PAUSE_LUA}
local base, now, arn = ARGV[1], tonumber(ARGV[2]), ARGV[5]
local lease = now + tonumber(ARGV[4])
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local out = {''}
local woken = {}
local fired = 0
for _, m in ipairs(due) do
  local kind, id = string.sub(m, 1, 1), string.sub(m, 3)
  if kind == 't' then
    redis.call('ZREM', KEYS[1], m)
    fired = fired + 1
    local run, timer = string.match(id, '^(.*)#([^#]*)$')
    local q = run and redis.call('HGET', base .. 'r:' .. run, 'q')
    if q then
      if timer == 'timeout' then
        local event = '{"type":"Stop","status":"TIMED_OUT","error":"States.Timeout","cause":""}'
        -- A paused execution still times out: unpaused, with the Stop ahead of
        -- what it held back, so none of that runs before the execution ends.
        if unpause(base, base .. 'x:' .. run, run) and q ~= '0' then
          redis.call('LPUSH', base .. 'i:' .. run, event)
        else
          redis.call('RPUSH', base .. 'i:' .. run, event)
        end
      else
        redis.call('RPUSH', base .. 'i:' .. run, '{"type":"TimerFired","timerId":' .. cjson.encode(arn .. id) .. '}')
      end
      redis.call('ZADD', KEYS[1], lease, 'r:' .. run)
      if not woken[run] then
        woken[run] = true
        out[#out + 1] = 's' .. run .. '@' .. q
      end
    end
  elseif kind == 'r' then
    local q = redis.call('HGET', base .. 'r:' .. id, 'q')
    if q and redis.call('LLEN', base .. 'i:' .. id) > 0 then
      redis.call('ZADD', KEYS[1], lease, m)
      if not woken[id] then
        woken[id] = true
        out[#out + 1] = 's' .. id .. '@' .. q
      end
    else
      redis.call('ZREM', KEYS[1], m)
    end
  elseif kind == 'k' then
    if redis.call('HEXISTS', KEYS[2], id) == 1 then
      redis.call('ZADD', KEYS[1], lease, m)
      out[#out + 1] = 'k' .. id
    else
      redis.call('ZREM', KEYS[1], m)
    end
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
-- One count for the batch: a burst claims thousands at a time.
if fired > 0 then redis.call('HINCRBY', base .. 'stats', 'timers', -fired) end
local nxt = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if nxt[2] then out[1] = nxt[2] end
return out
`,
};
