import { defineScript } from "../lua/spec.js";

export interface PruneArgs {
  base: string;
  /** The status whose index (`keys.executionsByStatus(status)`) this slice walks. */
  status: string;
  /** Only executions started before this (ms) can have expired. */
  cutoff: number;
  /** The slice: `count` entries from rank `from`. */
  from: number;
  count: number;
}

/** `next`: the rank to go on from, 0 when the slice reached the cutoff. */
export type PruneReply = { kind: "pruned"; removed: number; next: number };

/**
 * pruneIndex: drops from one status's indexes the executions whose records
 * expired (see `retentionSeconds`). Redis expires the execution's own keys; the
 * index entries (sorted sets shared by all executions) are removed here, a slice
 * at a time, so listings stay fast without a full scan. The old time indexes
 * (`xs`, `xs:<machine>`) lose the entry too, where a deployment still has one.
 */
export const pruneIndex = defineScript<PruneArgs, PruneReply>()({
  name: "pruneIndex",
  keys: ["index"],
  replies: ["pruned"],
  lua: `
local base = ARG.base
local old = redis.call('ZRANGEBYSCORE', KEY.index, '-inf', ARG.cutoff, 'LIMIT', ARG.from, ARG.count)
local removed = 0
for _, exec in ipairs(old) do
  if redis.call('EXISTS', base .. KIND.execution .. exec) == 0 then
    redis.call('ZREM', KEY.index, exec)
    redis.call('ZREM', base .. KIND.executions, exec)
    local machine = string.match(exec, '^([^:]+):')
    if machine then
      redis.call('ZREM', base .. KIND.statusIndex .. ARG.status .. ':' .. machine, exec)
      redis.call('ZREM', base .. KIND.executionsOf .. machine, exec)
    end
    removed = removed + 1
  end
end
if #old < ARG.count then return reply('pruned', {removed = removed, next = 0}) end
return reply('pruned', {removed = removed, next = ARG.from + #old - removed})
`,
});
