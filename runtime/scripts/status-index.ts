/**
 * Lua helper: the per-status execution indexes (`keys.executionsByStatus`),
 * `xst:<status>` and `xst:<status>:<machine>`, scored by start time like `xs`.
 *
 * moveStatusIndex(base, exec, from, to): moves an execution from one status's
 * indexes to another's (`from` = '' only adds), keeping its start-time score.
 */
export const STATUS_INDEX_LUA = `
local function moveStatusIndex(base, exec, from, to)
  local machine = string.match(exec, '^([^:]+):')
  local score = redis.call('ZSCORE', base .. KIND.executions, exec)
  if not score or not machine then return end
  local index = base .. KIND.statusIndex
  if from ~= '' then
    redis.call('ZREM', index .. from, exec)
    redis.call('ZREM', index .. from .. ':' .. machine, exec)
  end
  redis.call('ZADD', index .. to, score, exec)
  redis.call('ZADD', index .. to .. ':' .. machine, score, exec)
end
`;
