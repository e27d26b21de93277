import { EXECUTION_STATUSES } from "../contract.js";
import type { ScriptSpec } from "./spec.js";

/**
 * pruneIndex: drops from the execution indexes the executions whose records
 * expired (see `retentionSeconds`). Redis expires the execution's own keys; the
 * index entries (sorted sets shared by all executions) are removed here, a slice
 * at a time, so listings stay fast without a full scan.
 *
 * KEYS[1] executions zset
 * ARGV[1] key base, ARGV[2] cutoff (ms: only executions started before it can have
 * expired), ARGV[3] rank to start from, ARGV[4] how many to look at
 *
 * Returns {removed, nextRank}: nextRank 0 when the slice reached the cutoff.
 */
export const pruneIndex: ScriptSpec = {
  name: "pruneIndex",
  keys: 1,
  lua: `
local STATUSES = {${EXECUTION_STATUSES.map((s) => `'${s}'`).join(", ")}}
local base = ARGV[1]
local from, count = tonumber(ARGV[3]), tonumber(ARGV[4])
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', from, count)
local removed = 0
for _, exec in ipairs(old) do
  if redis.call('EXISTS', base .. 'x:' .. exec) == 0 then
    redis.call('ZREM', KEYS[1], exec)
    local machine = string.match(exec, '^([^:]+):')
    if machine then redis.call('ZREM', base .. 'xs:' .. machine, exec) end
    for _, status in ipairs(STATUSES) do
      redis.call('ZREM', base .. 'xst:' .. status, exec)
      if machine then redis.call('ZREM', base .. 'xst:' .. status .. ':' .. machine, exec) end
    end
    removed = removed + 1
  end
end
if #old < count then return {removed, 0} end
return {removed, from + #old - removed}
`,
};
