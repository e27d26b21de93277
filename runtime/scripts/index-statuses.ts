import type { ScriptSpec } from "./spec.js";
import { STATUS_INDEX_LUA } from "./status-index.js";

/**
 * indexStatuses: adds a slice of the executions stored before the per-status
 * indexes existed to the index of their status (a deployment upgraded in place).
 * Each slice is atomic, so an execution that ends meanwhile is either indexed
 * here as RUNNING and then moved by its end, or indexed by its end first.
 *
 * KEYS[1] executions zset
 * ARGV[1] key base, ARGV[2] rank to start from, ARGV[3] how many
 * Returns the number of entries looked at (fewer than ARGV[3]: the last slice).
 */
export const indexStatuses: ScriptSpec = {
  name: "indexStatuses",
  keys: 1,
  lua: `${STATUS_INDEX_LUA}
local base = ARGV[1]
local slice = redis.call('ZRANGE', KEYS[1], ARGV[2], tonumber(ARGV[2]) + tonumber(ARGV[3]) - 1)
for _, exec in ipairs(slice) do
  local f = redis.call('HMGET', base .. 'x:' .. exec, 'st', 'ps')
  local st = f[1]
  -- A paused execution's record says RUNNING; its index is PAUSED (pause-execution.ts).
  if st == 'RUNNING' and f[2] then st = 'PAUSED' end
  if st then moveStatusIndex(base, exec, '', st) end
end
return #slice
`,
};
