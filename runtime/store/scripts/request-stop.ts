import { PAUSE_LUA } from "../lua/pause.js";
import { defineScript } from "../lua/spec.js";
import { STATUS_INDEX_LUA } from "../lua/status-index.js";

export interface RequestStopArgs {
  base: string;
  /** The root run (short id). */
  run: string;
  /** The Stop event (JSON). */
  event: string;
  /** The root run's lease (ms): a crash before its job is enqueued delays the stop, never loses it. */
  leaseUntil: number;
}

export type RequestStopReply =
  { kind: "queued"; seq: number } | { kind: "notRunning" } | { kind: "missing" };

/**
 * requestStop: puts a Stop event at the FRONT of the root run's inbox, so it is
 * the next transition (a commit that read another head is refused and re-steps);
 * before the run has taken its Started event, right behind that one. A paused
 * execution is unpaused: a stopping execution's children must report back to it.
 * Decisions already delivered to the root run stay ahead of the Stop (whichever of
 * stop and decide commits first wins; decideApproval refuses once a Stop waits).
 */
export const requestStop = defineScript<RequestStopArgs, RequestStopReply>()({
  name: "requestStop",
  keys: ["execution", "run", "inbox", "schedule"],
  replies: ["queued", "notRunning", "missing"],
  helpers: [STATUS_INDEX_LUA, PAUSE_LUA],
  lua: `
local st = redis.call('HGET', KEY.execution, EXEC.status)
if not st then return reply('missing') end
if st ~= 'RUNNING' then return reply('notRunning') end
unpause(ARG.base, KEY.execution, ARG.run)
local q = redis.call('HGET', KEY.run, RUN.seq)
if q == '0' then
  -- Started is still waiting: a Stop before it would find no state to stop and be
  -- lost, so it goes right after it (everything else the run queues comes later).
  redis.call('RPUSH', KEY.inbox, ARG.event)
else
  -- A decision committed before this stop is stepped before it (decideApproval put
  -- it in this inbox): the execution moves on with ApprovalDecided in its history,
  -- then stops. Otherwise the Stop goes first.
  local after = nil
  for _, e in ipairs(redis.call('LRANGE', KEY.inbox, 0, 63)) do
    if string.find(e, '"type":"ApprovalDecided"', 1, true) then after = e end
  end
  if after then
    redis.call('LINSERT', KEY.inbox, 'AFTER', after, ARG.event)
  else
    redis.call('LPUSH', KEY.inbox, ARG.event)
  end
end
redis.call('ZADD', KEY.schedule, ARG.leaseUntil, MEMBER.run .. ARG.run)
return reply('queued', {seq = tonumber(q)})
`,
});
