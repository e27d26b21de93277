import { PAUSE_LUA } from "./pause.js";
import { STATUS_INDEX_LUA } from "./status-index.js";

/** How an execution ended: the fields of its record that its end sets. */
export interface ExecutionEnd {
  /** The execution (short id). */
  exec: string;
  status: string;
  /** JSON, when it succeeded. */
  output?: string;
  error?: string;
  cause?: string;
  /** ISO time. */
  stoppedAt: string;
  /** The execution timeout's schedule member (dropped whether armed or not); absent: none was armed. */
  timeoutMember?: string;
  /** Its keys expire this long after (0 = kept forever). */
  keepSeconds: number;
  /** Its start (ms), its score in the status indexes; absent: read from the index. */
  startedMs?: number;
}

/**
 * Lua helper shared by the scripts that end an execution: the commit of its
 * root run's last transition (`commitTransition`, op `end`) and the worker that
 * gives up on it (`giveUp`). One place sets the record's final fields, moves the
 * status counts, drops the execution timeout and announces the end.
 *
 * endExecution(base, execKey, scheduleKey, e, expireKeys, known), `e` an
 * ExecutionEnd: does nothing unless the record is RUNNING; returns true when it
 * ended it. The execution's payloads (runtime/payloads/history-payloads.ts) expire with
 * `expireKeys`. `known` (optional), from a caller that read and writes the record
 * itself: `status` and `pause` as it read them, and `fields` ({field, value, ...})
 * it would write, written here with the end's in one HSET.
 */
export const END_EXECUTION_LUA = `${STATUS_INDEX_LUA}${PAUSE_LUA}
local function endExecution(base, execKey, scheduleKey, e, expireKeys, known)
  -- One read and one write of the record at most: every end of every execution comes here.
  local rec = known or hmgetNamed(execKey, EXEC, {'status', 'pause'})
  if rec.status ~= 'RUNNING' then
    if known and #known.fields > 0 then redis.call('HSET', execKey, unpack(known.fields)) end
    return false
  end
  local fields = known and known.fields or {}
  for _, v in ipairs({EXEC.status, e.status, EXEC.stoppedAt, e.stoppedAt}) do fields[#fields + 1] = v end
  if e.output then fields[#fields + 1] = EXEC.output; fields[#fields + 1] = e.output end
  if e.error then fields[#fields + 1] = EXEC.error; fields[#fields + 1] = e.error end
  if e.cause then fields[#fields + 1] = EXEC.cause; fields[#fields + 1] = e.cause end
  redis.call('HSET', execKey, unpack(fields))
  if e.timeoutMember and redis.call('ZREM', scheduleKey, e.timeoutMember) == 1 then
    redis.call('HINCRBY', base .. KIND.stats, STATS.timers, -1)
  end
  redis.call('HINCRBY', base .. KIND.stats, 'RUNNING', -1)
  redis.call('HINCRBY', base .. KIND.stats, e.status, 1)
  -- Stops unpause first; a forced end (give-up) may still find the execution paused.
  if rec.pause then unpause(base, execKey, e.exec) end
  moveStatusIndex(base, e.exec, 'RUNNING', e.status, e.startedMs)
  redis.call('PUBLISH', base .. KIND.ended, e.exec)
  -- The failure log (worker/failure-log.ts) hears only these: most ends need no line.
  if e.status ~= 'SUCCEEDED' then redis.call('PUBLISH', base .. KIND.failed, e.exec) end
  if e.keepSeconds > 0 then
    for _, key in ipairs(expireKeys) do redis.call('EXPIRE', key, e.keepSeconds) end
    redis.call('EXPIRE', base .. KIND.payloads .. e.exec, e.keepSeconds)
  end
  return true
end
`;
