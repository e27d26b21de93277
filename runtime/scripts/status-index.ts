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
  local score = redis.call('ZSCORE', base .. 'xs', exec)
  if not score or not machine then return end
  if from ~= '' then
    redis.call('ZREM', base .. 'xst:' .. from, exec)
    redis.call('ZREM', base .. 'xst:' .. from .. ':' .. machine, exec)
  end
  redis.call('ZADD', base .. 'xst:' .. to, score, exec)
  redis.call('ZADD', base .. 'xst:' .. to .. ':' .. machine, score, exec)
end
`;
