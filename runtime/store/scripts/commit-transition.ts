import { CHECK_OPS_LUA, type CommitOp } from "../lua/commit-ops.js";
import { END_EXECUTION_LUA } from "../lua/end-execution.js";
import { APPROVAL_LUA } from "../lua/approval.js";
import { RUN_STATE_LUA } from "../lua/run-state.js";
import { defineScript } from "../lua/spec.js";

export type { CommitOp } from "../lua/commit-ops.js";

/**
 * commitTransition: the one atomic write of a transition (see runtime/commit/transition.ts
 * for the protocol). Everything the step decided that lives in Redis happens here:
 * the run's new state, seq + 1, history with execution-wide ids, the inbox pop,
 * the journal entry, timers, task records, children, pushes to other runs' inboxes
 * and the execution's end. Only enqueueing BullMQ jobs happens after, outside.
 *
 * Fences, in order: the run's seq (`stale`), the inbox head the step consumed
 * (`headChanged`: a stop was put in front), and — when it appends history — the
 * execution's history count and chain head (`raced`: another run of the same
 * execution wrote history first). The events' chain hashes (runtime/audit/chain.ts)
 * are computed in TypeScript from the head read with the count; the head moves
 * here with the count, so the chain follows the ids and never forks.
 */
export interface CommitArgs {
  /** The key prefix: other runs' keys are built from it (keys.ts). */
  base: string;
  /** The run (short id). */
  run: string;
  /** The seq the step started from. */
  seq: number;
  /** The inbox head the step consumed. */
  head: string;
  /**
   * Several steps batched (runtime/commit/transition.ts, "Batching"): the head must be the
   * inbox's only event (`crowded` otherwise), since the batch took the run's own
   * Continues ahead of anything queued behind it.
   */
  alone?: boolean;
  /**
   * Events queued behind `head` that the commit's later steps took (runtime/commit/plan.ts,
   * "queued"), in inbox order: they must be the inbox's next ones (`headChanged`
   * otherwise), and are popped with the head.
   */
  queued?: string[];
  /** Answer with up to this many of the events queued behind the next head (`queued`). */
  peek?: number;
  /** The new run state (stored form, run-state.ts). */
  state: string;
  /** The journal entries, one per step (stored form). */
  journal: string[];
  /**
   * The JSON texts the state, events, journal entry and ops refer to (runtime/payloads/history-payloads.ts):
   * SHA-256 hex → stored text, each set where absent.
   */
  payloads?: Record<string, string>;
  /** History events to append (stored form, with their chain `hash`), ids historyCount + 1… */
  events: string[];
  /** The history count and chain head the events build on (only looked at with events). */
  historyCount: number;
  historyHead: string;
  /** The last event's hash: the chain head after the commit. */
  newHistoryHead: string;
  now: number;
  leaseMs: number;
  tombstoneSeconds: number;
  ops: CommitOp[];
}

/**
 * `fx`: the follow-up jobs (job-ids.ts) of every run that received an event and
 * every task to call.
 */
export type CommitReply =
  /**
   * `head`: the run's next inbox event (none: absent), so a chained transition need not
   * load it; `queued`: up to `peek` events behind it, for that transition to take too.
   */
  | { kind: "committed"; seq: number; fx: string; head?: string; queued?: string[] }
  /** The run is past the expected seq; `fx` are its last commit's follow-ups. */
  | { kind: "stale"; seq: number; fx: string }
  /** Another run wrote history first: step again on this count and head (unless paused meanwhile: load again). */
  | { kind: "raced"; historyCount: number; historyHead: string; paused: boolean }
  | { kind: "missing" }
  | { kind: "headChanged" }
  /** `alone` was asked and other events wait behind the head: commit one step at a time. */
  | { kind: "crowded" };

export const commitTransition = defineScript<CommitArgs, CommitReply>()({
  name: "commitTransition",
  keys: [
    "run",
    "inbox",
    "execution",
    "history",
    "journal",
    "payloads",
    "schedule",
    "tasks",
    "tokens",
  ],
  replies: ["committed", "stale", "raced", "missing", "headChanged", "crowded"],
  helpers: [RUN_STATE_LUA, END_EXECUTION_LUA, APPROVAL_LUA, CHECK_OPS_LUA],
  lua: `
-- Before anything is read or written: what cannot be carried out writes nothing.
local wrong = checkOps(ARG.ops)
if not wrong and #ARG.journal == 0 then wrong = 'no journal entry' end
if wrong then return redis.error_reply('commitTransition: ' .. wrong .. '; nothing written') end
local base, self = ARG.base, ARG.run
local runRead = hmgetNamed(KEY.run, RUN, {'seq', 'stateSlices', 'historyOwner'})
local seq = runRead.seq
if not seq then return reply('missing') end
if tonumber(seq) ~= ARG.seq then
  return reply('stale', {seq = tonumber(seq), fx = redis.call('HGET', KEY.run, RUN.followUps) or ''})
end
if redis.call('LINDEX', KEY.inbox, 0) ~= ARG.head then return reply('headChanged') end
if ARG.alone and redis.call('LLEN', KEY.inbox) > 1 then return reply('crowded') end
local taken = ARG.queued and #ARG.queued or 0
if taken > 0 then
  local behind = redis.call('LRANGE', KEY.inbox, 1, taken)
  for i = 1, taken do
    if behind[i] ~= ARG.queued[i] then return reply('headChanged') end
  end
end
local events = ARG.events
-- A Distributed Map's item run writes the history of its child execution (its own
-- record and list, runtime/map-runs/child-executions.ts); every other run its execution's.
local owner = runRead.historyOwner
local historyRecord = owner and (ARG.base .. KIND.execution .. owner) or KEY.execution
local historyList = owner and (ARG.base .. KIND.history .. owner) or KEY.history
-- The record's fields this commit writes, in one HSET at the end (with the
-- execution's end, when it ends), and what an end needs of it, read with the fence.
local recordFields, known = {}, nil
if #events > 0 then
  local x = hmgetNamed(KEY.execution, EXEC, {'historyCount', 'historyHead', 'pause', 'status'})
  if owner then
    local o = hmgetNamed(historyRecord, EXEC, {'historyCount', 'historyHead'})
    x.historyCount, x.historyHead = o.historyCount, o.historyHead
  end
  local hc, hh = tonumber(x.historyCount or '0'), x.historyHead or ''
  if hc ~= ARG.historyCount or hh ~= ARG.historyHead then
    return reply('raced', {historyCount = hc, historyHead = hh, paused = x.pause ~= false})
  end
  if owner then
    redis.call('HSET', historyRecord, EXEC.historyCount, hc + #events, EXEC.historyHead, ARG.newHistoryHead)
  else
    recordFields = {EXEC.historyCount, hc + #events, EXEC.historyHead, ARG.newHistoryHead}
  end
  known = {status = x.status, pause = x.pause, fields = recordFields}
  for i = 1, #events, 1000 do
    redis.call('RPUSH', historyList, unpack(events, i, math.min(i + 999, #events)))
  end
end
if ARG.payloads then
  for hash, text in pairs(ARG.payloads) do redis.call('HSETNX', KEY.payloads, hash, text) end
  -- A child execution's history is read with its own payloads: they go there too.
  if owner then
    local own = ARG.base .. KIND.payloads .. owner
    for hash, text in pairs(ARG.payloads) do redis.call('HSETNX', own, hash, text) end
  end
  -- Written after the end (a late child's commit): it expires with the record.
  local ttl = redis.call('PTTL', KEY.execution)
  if ttl > 0 then redis.call('PEXPIRE', KEY.payloads, ttl) end
end
-- A run this commit drops (below) has its inbox deleted: no pop first.
local drops = false
for _, o in ipairs(ARG.ops) do drops = drops or (o.op == 'end' and o.dropRun == true) end
if not drops then
  if taken > 0 then redis.call('LTRIM', KEY.inbox, taken + 1, -1)
  else redis.call('LPOP', KEY.inbox) end
end
local newSeq = tonumber(seq) + 1
redis.call('RPUSH', KEY.journal, unpack(ARG.journal))
local now = ARG.now
local lease = now + ARG.leaseMs
local ensure, woken = {}, {}
local function runKey(run) return base .. KIND.run .. run end
local function inboxKey(run) return base .. KIND.inbox .. run end
local function wake(run)
  if run == self or woken[run] then return end
  woken[run] = true
  local q = redis.call('HGET', runKey(run), RUN.seq)
  if not q then return end
  redis.call('ZADD', KEY.schedule, lease, MEMBER.run .. run)
  ensure[#ensure + 1] = stepJob(run, q)
end
local function start(run, state, started, historyOwner)
  putState(runKey(run), state, nil, historyOwner and {RUN.seq, 0, RUN.historyOwner, historyOwner} or {RUN.seq, 0})
  redis.call('RPUSH', inboxKey(run), started)
  wake(run)
end
local function expireIn(key, seconds)
  if seconds > 0 then redis.call('EXPIRE', key, seconds) end
end
for _, o in ipairs(ARG.ops) do
  local op = o.op
  if op == 'push' then
    if o.run == self or redis.call('EXISTS', runKey(o.run)) == 1 then
      redis.call(o.front and 'LPUSH' or 'RPUSH', inboxKey(o.run), o.event)
      wake(o.run)
    end
  elseif op == 'spawn' then
    start(o.run, o.state, o.started, o.owner)
  elseif op == 'spawnKept' then
    local ji = base .. KIND.joinInputs .. o.join
    -- Taken out as children start: the hash holds only the inputs still to start,
    -- and Redis deletes it with the last one.
    local input = redis.call('HGET', ji, o.index) or 'null'
    redis.call('HDEL', ji, o.index)
    start(o.run, o.state, fill(o.started, input), o.owner)
  elseif op == 'chunkTask' then
    local ji = base .. KIND.joinInputs .. o.join
    local fields = {}
    for c = o.from, o.from + o.count - 1 do fields[#fields + 1] = c end
    local values = redis.call('HMGET', ji, unpack(fields))
    local parts = {}
    for k = 1, #values do parts[k] = values[k] or 'null' end
    -- Taken out as chunks start, as spawnKept takes a child's.
    redis.call('HDEL', ji, unpack(fields))
    redis.call('HSET', KEY.tasks, o.task, fill(o.record, '[' .. table.concat(parts, ',') .. ']'))
    redis.call('ZADD', KEY.schedule, lease, MEMBER.task .. o.task)
    ensure[#ensure + 1] = taskJob(o.task)
  elseif op == 'arm' then
    if redis.call('ZADD', KEY.schedule, o.at, o.member) == 1 then
      redis.call('HINCRBY', base .. KIND.stats, STATS.timers, 1)
    end
  elseif op == 'disarm' then
    if redis.call('ZREM', KEY.schedule, o.member) == 1 then
      redis.call('HINCRBY', base .. KIND.stats, STATS.timers, -1)
    end
  elseif op == 'task' then
    redis.call('HSET', KEY.tasks, o.task, o.record)
    if o.token then redis.call('HSET', KEY.tokens, o.token, o.task) end
    if o.mode == 'call' then
      redis.call('ZADD', KEY.schedule, lease, MEMBER.task .. o.task)
      ensure[#ensure + 1] = taskJob(o.task)
    elseif o.mode == 'activity' then
      redis.call('RPUSH', base .. KIND.activity .. o.activity, o.task)
      -- Wakes the long polls of this activity (runtime/executions/activity-wakeups.ts).
      redis.call('PUBLISH', base .. KIND.activityReady, o.activity)
    end
  elseif op == 'untask' then
    local rec = redis.call('HGET', KEY.tasks, o.task)
    if rec then
      redis.call('HDEL', KEY.tasks, o.task)
      local r = cjson.decode(rec)
      -- Not taken by a worker yet: out of the activity's list, or a poll would wade through it.
      if r.activity then redis.call('LREM', base .. KIND.activity .. r.activity, 1, o.task) end
      if r.token then
        redis.call('HDEL', KEY.tokens, r.token)
        redis.call('SET', base .. KIND.tombstone .. r.token, o.why, 'EX', ARG.tombstoneSeconds)
      end
    end
    redis.call('ZREM', KEY.schedule, MEMBER.task .. o.task)
  elseif op == 'end' then
    -- A dropped run's hash and inbox are deleted below: no expiry to set on them.
    endExecution(base, KEY.execution, KEY.schedule, o, o.dropRun == true
      and {KEY.execution, KEY.history, KEY.journal}
      or {KEY.run, KEY.inbox, KEY.execution, KEY.history, KEY.journal}, known)
    recordFields = {}
  elseif op == 'keepInput' then
    redis.call('HSET', KEY.run, RUN.inputVersion, o.version, RUN.input, o.input)
  elseif op == 'dropInput' then
    redis.call('HDEL', KEY.run, RUN.inputVersion, RUN.input)
  elseif op == 'joined' then
    local jr = base .. KIND.joinResults .. o.join
    if redis.call('HSETNX', jr, o.index, o.output) == 1 then
      if redis.call('EXISTS', runKey(o.parent)) == 1 then
        redis.call('RPUSH', inboxKey(o.parent), o.event)
        wake(o.parent)
      end
    end
    expireIn(jr, o.keepSeconds)
  elseif op == 'stopJoin' then
    local jr = base .. KIND.joinResults .. o.join
    for c = 0, o.started - 1 do
      if redis.call('HEXISTS', jr, c) == 0 then
        local run = o.join .. '/' .. c
        if redis.call('EXISTS', runKey(run)) == 1 then
          redis.call('LPUSH', inboxKey(run), o.event)
          wake(run)
        end
      end
    end
    -- A stopped join starts no more children: their kept inputs go.
    redis.call('DEL', base .. KIND.joinInputs .. o.join)
  elseif op == 'keepOutputs' then
    local jr = base .. KIND.joinResults .. o.join
    for _, kept in ipairs(o.outputs) do redis.call('HSETNX', jr, kept[1], kept[2]) end
    if #o.outputs > 0 then expireIn(jr, o.keepSeconds) end
  elseif op == 'keepInputs' then
    local ji, inputs = base .. KIND.joinInputs .. o.join, o.inputs
    for first = 1, #inputs, 500 do
      local fields = {}
      for k = first, math.min(first + 499, #inputs) do
        fields[#fields + 1] = o.from + k - 1
        fields[#fields + 1] = inputs[k]
      end
      redis.call('HSET', ji, unpack(fields))
    end
    expireIn(ji, o.keepSeconds)
  elseif op == 'collect' then
    local jr = base .. KIND.joinResults .. o.join
    local parts = {}
    for first = 0, o.total - 1, 1000 do
      local fields = {}
      for c = first, math.min(first + 999, o.total - 1) do fields[#fields + 1] = c end
      local values = redis.call('HMGET', jr, unpack(fields))
      for k = 1, #values do parts[#parts + 1] = values[k] or 'null' end
    end
    redis.call('DEL', jr)
    redis.call('LPUSH', KEY.inbox, fill(o.event, '[' .. table.concat(parts, ',') .. ']'))
  elseif op == 'approval' then
    openApproval(base, o.id, o.fields)
  elseif op == 'closeApproval' then
    closeApproval(base, o.id, o.status, now)
  elseif op == 'noticeApproval' then
    noticeApproval(base, o.id, o.event, o.groups)
  elseif op == 'childExecution' then
    -- This run's child execution (a Distributed Map's item): its record's fields, its
    -- place in its Map Run's list, and, once it ended, its expiry.
    if owner then
      if o.clear and #o.clear > 0 then redis.call('HDEL', historyRecord, unpack(o.clear)) end
      if #o.fields > 0 then redis.call('HSET', historyRecord, unpack(o.fields)) end
      if o.mapRun then
        redis.call('ZADD', base .. KIND.mapRunChildren .. o.mapRun, o.at or now, owner)
      end
      local own = {historyRecord, historyList, base .. KIND.payloads .. owner}
      for _, key in ipairs(own) do
        if o.persist then redis.call('PERSIST', key) end
        if o.keepSeconds and o.keepSeconds > 0 then expireIn(key, o.keepSeconds) end
      end
    end
  elseif op == 'usage' then
    redis.call('HINCRBYFLOAT', KEY.execution, o.field, o.amount)
  elseif op == 'expire' then
    redis.call('EXPIRE', KEY.run, o.seconds)
    redis.call('EXPIRE', KEY.inbox, o.seconds)
  else
    -- checkOps let through a kind this loop does not carry out: a bug, refused the same.
    return redis.error_reply('commitTransition: unknown op ' .. tostring(op))
  end
end
if #recordFields > 0 then redis.call('HSET', KEY.execution, unpack(recordFields)) end
if drops then
  -- Whatever still arrives for it (a late child's end) is for a run that is over.
  redis.call('DEL', KEY.run, KEY.inbox)
  redis.call('ZREM', KEY.schedule, MEMBER.run .. self)
  return reply('committed', {seq = newSeq, fx = table.concat(ensure, ' ')})
end
local head = redis.call('LINDEX', KEY.inbox, 0)
if head then
  redis.call('ZADD', KEY.schedule, lease, MEMBER.run .. self)
  ensure[#ensure + 1] = stepJob(self, newSeq)
else
  redis.call('ZREM', KEY.schedule, MEMBER.run .. self)
end
local fx = table.concat(ensure, ' ')
-- The seq and follow-ups in the state's HSET; no follow-ups: none kept.
if fx == '' then
  putState(KEY.run, ARG.state, runRead.stateSlices, {RUN.seq, newSeq})
  redis.call('HDEL', KEY.run, RUN.followUps)
else
  putState(KEY.run, ARG.state, runRead.stateSlices, {RUN.seq, newSeq, RUN.followUps, fx})
end
local queued = nil
if head and ARG.peek and ARG.peek > 0 then
  queued = redis.call('LRANGE', KEY.inbox, 1, ARG.peek)
  if #queued == 0 then queued = nil end
end
return reply('committed', {seq = newSeq, fx = fx, head = head or nil, queued = queued})
`,
});
