/**
 * Unpausing, as the scripts that end, stop or claim an execution's timers do it
 * first (see store/scripts/pause-execution.ts for what a pause is). Needs
 * STATUS_INDEX_LUA before it.
 */
export const PAUSE_LUA = `
local function unpause(base, execKey, exec)
  if redis.call('HDEL', execKey, EXEC.pause) == 0 then return false end
  redis.call('HINCRBY', base .. KIND.stats, 'PAUSED', -1)
  redis.call('HINCRBY', base .. KIND.stats, 'RUNNING', 1)
  moveStatusIndex(base, exec, 'PAUSED', 'RUNNING')
  redis.call('DEL', base .. KIND.parked .. exec)
  return true
end
`;
