import type { EventTemplate } from "../event-template.js";
import type { ExecutionField } from "../fields.js";
import { LOAD_LUA, type LoadSnapshot } from "./load-transition.js";
import { PAUSE_LUA } from "../lua/pause.js";
import { defineScript } from "../lua/spec.js";
import { STATUS_INDEX_LUA } from "../lua/status-index.js";

export interface ClaimDueArgs {
  base: string;
  now: number;
  /** At most this many entries. */
  max: number;
  leaseMs: number;
  /** TimerFired, with `timerId` left for the timer (event-template.ts). */
  timerFired: EventTemplate;
  /** What the execution timeout (`#timeout`) delivers: a Stop, TIMED_OUT (JSON). */
  timedOut: string;
  /** What timer ids are short for (ids.ts EXECUTION_ARN_PREFIX): events carry the long id. */
  idPrefix: string;
  /**
   * The claimer fires the runs itself (scheduler.ts): hand out the snapshot of each
   * run its timer's event is the only event of, with these fields of the record
   * (commit/execution-cache.ts `RECORD_FIELDS`), so that its first transition needs no load.
   */
  snapshots?: { recordFields: readonly ExecutionField[] };
}

/**
 * `jobs`: follow-ups (job-ids.ts) to fire or enqueue; `next`: the next due time
 * (ms), absent when nothing is scheduled; `loaded`: by run, the snapshots asked
 * for (load-transition.ts), taken as the claim pushed the event.
 */
export type ClaimDueReply = {
  kind: "claimed";
  jobs: string[];
  next?: number;
  loaded?: Record<string, LoadSnapshot>;
};

/**
 * claimDue: hands the due entries of the schedule to exactly one worker.
 *  - `t:<run>#<timer>`: a timer fired. Its event goes into the run's inbox (the
 *    execution timeout `#timeout` becomes Stop{TIMED_OUT}, in front of the inbox of
 *    a paused execution, which it unpauses); the member is removed. A run that
 *    had no other event is loaded as it is (`snapshots`): the claimer's first
 *    transition starts from it, and its commit's fences catch any change since.
 *  - `r:<run>` / `k:<task>`: a lease ran out before the job that should exist was
 *    seen to finish (a process died between a commit and its enqueue). If the run
 *    still has events (the task is still pending) the lease is renewed and the
 *    job is handed back to be (re-)enqueued; enqueueing an existing job id is a
 *    no-op. Otherwise the lease is dropped.
 */
export const claimDue = defineScript<ClaimDueArgs, ClaimDueReply>()({
  name: "claimDue",
  keys: ["schedule", "tasks"],
  replies: ["claimed"],
  helpers: [STATUS_INDEX_LUA, PAUSE_LUA, LOAD_LUA],
  lua: `
local base, now = ARG.base, ARG.now
local lease = now + ARG.leaseMs
local due = redis.call('ZRANGEBYSCORE', KEY.schedule, '-inf', now, 'LIMIT', 0, ARG.max)
local jobs = {}
local woken = {}
local fired = 0
-- The schedule's changes, written at the end in a few calls rather than one per
-- entry: a burst claims thousands at a time (every call from Lua costs).
local removed, leased = {}, {}
local loaded, anyLoaded = {}, false
local function wake(run, q)
  leased[#leased + 1] = MEMBER.run .. run
  if not woken[run] then
    woken[run] = true
    jobs[#jobs + 1] = stepJob(run, q)
  end
end
for _, m in ipairs(due) do
  local kind = string.sub(m, 1, 2)
  local id = string.sub(m, 3)
  if kind == MEMBER.timer then
    removed[#removed + 1] = m
    fired = fired + 1
    local run, timer = string.match(id, '^(.*)#([^#]*)$')
    local runKey = run and base .. KIND.run .. run
    local read = run and readRun(runKey)
    local q = read and read.seq
    if q then
      local inbox = base .. KIND.inbox .. run
      if timer == 'timeout' then
        -- A paused execution still times out: unpaused, with the Stop ahead of
        -- what it held back, so none of that runs before the execution ends.
        if unpause(base, base .. KIND.execution .. run, run) and q ~= '0' then
          redis.call('LPUSH', inbox, ARG.timedOut)
        else
          redis.call('RPUSH', inbox, ARG.timedOut)
        end
      else
        local event = fill(ARG.timerFired, cjson.encode(ARG.idPrefix .. id))
        -- (A run whose input is kept apart loads it as usual: the claimer may hold it.)
        if redis.call('RPUSH', inbox, event) == 1 and ARG.snapshots and not read.inputVersion and not woken[run] then
          loaded[run] = loadedOf(base, runKey, base .. KIND.execution .. string.match(run, '^[^/#]*'),
            read, event, nil, ARG.snapshots.recordFields)
          anyLoaded = true
        end
      end
      wake(run, q)
    end
  elseif kind == MEMBER.run then
    local q = redis.call('HGET', base .. KIND.run .. id, RUN.seq)
    if q and redis.call('LLEN', base .. KIND.inbox .. id) > 0 then
      wake(id, q)
    else
      removed[#removed + 1] = m
    end
  elseif kind == MEMBER.task then
    if redis.call('HEXISTS', KEY.tasks, id) == 1 then
      leased[#leased + 1] = m
      jobs[#jobs + 1] = taskJob(id)
    else
      removed[#removed + 1] = m
    end
  else
    removed[#removed + 1] = m
  end
end
-- Removals first: a run found idle early in the batch may be woken by a later timer.
for i = 1, #removed, 500 do
  redis.call('ZREM', KEY.schedule, unpack(removed, i, math.min(i + 499, #removed)))
end
for i = 1, #leased, 500 do
  local args = {}
  for j = i, math.min(i + 499, #leased) do
    args[#args + 1] = lease
    args[#args + 1] = leased[j]
  end
  redis.call('ZADD', KEY.schedule, unpack(args))
end
-- One count for the batch: a burst claims thousands at a time.
if fired > 0 then redis.call('HINCRBY', base .. KIND.stats, STATS.timers, -fired) end
local nxt = redis.call('ZRANGE', KEY.schedule, 0, 0, 'WITHSCORES')
return reply('claimed', {jobs = jobs, next = nxt[2] and tonumber(nxt[2]) or nil,
  loaded = anyLoaded and loaded or nil})
`,
});
