import { defineScript } from "../lua/spec.js";
import { STATUS_INDEX_LUA } from "../lua/status-index.js";

export interface IndexStatusesArgs {
  base: string;
  /** The slice: ranks from, from + count - 1 of the executions index. */
  from: number;
  count: number;
}

/** `seen`: entries looked at (fewer than `count`: the last slice). */
export type IndexStatusesReply = { kind: "indexed"; seen: number };

/**
 * indexStatuses: adds a slice of the executions stored before the per-status
 * indexes existed to the index of their status (a deployment upgraded in place).
 * Each slice is atomic, so an execution that ends meanwhile is either indexed
 * here as RUNNING and then moved by its end, or indexed by its end first.
 */
export const indexStatuses = defineScript<IndexStatusesArgs, IndexStatusesReply>()({
  name: "indexStatuses",
  keys: ["executions"],
  replies: ["indexed"],
  helpers: [STATUS_INDEX_LUA],
  lua: `
local base = ARG.base
local slice = redis.call('ZRANGE', KEY.executions, ARG.from, ARG.from + ARG.count - 1)
for _, exec in ipairs(slice) do
  local f = hmgetNamed(base .. KIND.execution .. exec, EXEC, {'status', 'pause'})
  local st = f.status
  -- A paused execution's record says RUNNING; its index is PAUSED (pause-execution.ts).
  if st == 'RUNNING' and f.pause then st = 'PAUSED' end
  if st then moveStatusIndex(base, exec, '', st) end
end
return reply('indexed', {seen = #slice})
`,
});
