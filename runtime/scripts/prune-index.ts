import { EXECUTION_STATUSES } from "../contract.js";
import { defineScript } from "./spec.js";

export interface PruneArgs {
  base: string;
  /** Only executions started before this (ms) can have expired. */
  cutoff: number;
  /** The slice: `count` entries from rank `from`. */
  from: number;
  count: number;
}

/** `next`: the rank to go on from, 0 when the slice reached the cutoff. */
export type PruneReply = { kind: "pruned"; removed: number; next: number };

/**
 * pruneIndex: drops from the execution indexes the executions whose records
 * expired (see `retentionSeconds`). Redis expires the execution's own keys; the
 * index entries (sorted sets shared by all executions) are removed here, a slice
 * at a time, so listings stay fast without a full scan.
 */
export const pruneIndex = defineScript<PruneArgs, PruneReply>()({
  name: "pruneIndex",
  keys: ["executions"],
  replies: ["pruned"],
  lua: `
local STATUSES = {${EXECUTION_STATUSES.map((s) => `'${s}'`).join(", ")}}
local base = ARG.base
local old = redis.call('ZRANGEBYSCORE', KEY.executions, '-inf', ARG.cutoff, 'LIMIT', ARG.from, ARG.count)
local removed = 0
for _, exec in ipairs(old) do
  if redis.call('EXISTS', base .. KIND.execution .. exec) == 0 then
    redis.call('ZREM', KEY.executions, exec)
    local machine = string.match(exec, '^([^:]+):')
    if machine then redis.call('ZREM', base .. KIND.executionsOf .. machine, exec) end
    for _, status in ipairs(STATUSES) do
      redis.call('ZREM', base .. KIND.statusIndex .. status, exec)
      if machine then redis.call('ZREM', base .. KIND.statusIndex .. status .. ':' .. machine, exec) end
    end
    removed = removed + 1
  end
end
if #old < ARG.count then return reply('pruned', {removed = removed, next = 0}) end
return reply('pruned', {removed = removed, next = ARG.from + #old - removed})
`,
});
