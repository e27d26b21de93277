/**
 * Lua helper: the per-status execution indexes (`keys.executionsByStatus`),
 * `xst:<status>` and `xst:<status>:<machine>`, scored by start time. They are the
 * only execution indexes: an unfiltered listing merges them (executions/execution-store.ts).
 *
 * moveStatusIndex(base, exec, from, to, score): moves an execution from one
 * status's indexes to another's, keeping its start-time score: `score` when the
 * caller knows it, else read from the index it leaves (`from` = '' only adds,
 * with `score`). An execution stored before these indexes were the only ones is
 * found by its score in the old time index `xs`.
 */
export const STATUS_INDEX_LUA = `
local function moveStatusIndex(base, exec, from, to, score)
  local machine = string.match(exec, '^([^:]+):')
  if not machine then return end
  local index = base .. KIND.statusIndex
  if from ~= '' then
    score = score or redis.call('ZSCORE', index .. from, exec)
    redis.call('ZREM', index .. from, exec)
    redis.call('ZREM', index .. from .. ':' .. machine, exec)
  end
  if not score then score = redis.call('ZSCORE', base .. KIND.executions, exec) end
  if not score then return end
  redis.call('ZADD', index .. to, score, exec)
  redis.call('ZADD', index .. to .. ':' .. machine, score, exec)
end
`;
