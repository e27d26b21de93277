import { PAUSE_LUA } from "./pause-execution.js";
import { STATUS_INDEX_LUA } from "./status-index.js";

/**
 * Lua helper shared by the scripts that end an execution: the commit of its
 * root run's last transition (`commitTransition`, op `end`) and the worker that
 * gives up on it (`giveUp`). One place sets the record's final fields, moves the
 * status counts, drops the execution timeout and announces the end.
 *
 * endExecution(base, execKey, scheduleKey, exec, status, out, err, cause,
 *              stoppedAt, timeoutMember, keepSeconds, expireKeys)
 * Does nothing unless the record is RUNNING; returns true when it ended it.
 * `expireKeys` expire after `keepSeconds` (0 = kept forever).
 */
export const END_EXECUTION_LUA = `${STATUS_INDEX_LUA}${PAUSE_LUA}
local function endExecution(base, execKey, scheduleKey, exec, status, out, err, cause, stoppedAt, timeoutMember, keep, expireKeys)
  if redis.call('HGET', execKey, 'st') ~= 'RUNNING' then return false end
  redis.call('HSET', execKey, 'st', status, 't1', stoppedAt)
  if out ~= '' then redis.call('HSET', execKey, 'out', out) end
  if err ~= '' then redis.call('HSET', execKey, 'err', err) end
  if cause ~= '' then redis.call('HSET', execKey, 'cause', cause) end
  if redis.call('ZREM', scheduleKey, timeoutMember) == 1 then
    redis.call('HINCRBY', base .. 'stats', 'timers', -1)
  end
  redis.call('HINCRBY', base .. 'stats', 'RUNNING', -1)
  redis.call('HINCRBY', base .. 'stats', status, 1)
  -- Stops unpause first; a forced end (give-up) may still find the execution paused.
  unpause(base, execKey, exec)
  moveStatusIndex(base, exec, 'RUNNING', status)
  redis.call('PUBLISH', base .. 'ended', exec)
  keep = tonumber(keep)
  if keep > 0 then
    for _, key in ipairs(expireKeys) do redis.call('EXPIRE', key, keep) end
  end
  return true
end
`;
