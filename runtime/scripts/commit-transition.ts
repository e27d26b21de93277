import { END_EXECUTION_LUA } from "./end-execution.js";
import { APPROVAL_LUA } from "./approval-lua.js";
import { RUN_STATE_LUA } from "./run-state.js";
import type { ScriptSpec } from "./spec.js";

/**
 * commitTransition: the one atomic write of a transition (see runtime/transition.ts
 * for the protocol). Everything the step decided that lives in Redis happens here:
 * the run's new state, seq + 1, history with execution-wide ids, the inbox pop,
 * the journal entry, timers, task records, children, pushes to other runs' inboxes
 * and the execution's end. Only enqueueing BullMQ jobs happens after, outside.
 *
 * KEYS[1] run hash            KEYS[5] journal list
 * KEYS[2] run inbox           KEYS[6] schedule zset
 * KEYS[3] execution hash      KEYS[7] tasks hash
 * KEYS[4] history list        KEYS[8] tokens hash
 *
 * ARGV[1] key base            ARGV[7]  now (ms)
 * ARGV[2] run (short id)      ARGV[8]  lease (ms)
 * ARGV[3] expected seq        ARGV[9]  tombstone TTL (s)
 * ARGV[4] expected history count (hc) ARGV[10] the inbox head the step consumed
 * ARGV[5] new run state JSON  ARGV[11] expected history head hash (hh, '' if none)
 * ARGV[6] journal entry JSON  ARGV[12] new history head hash (the last event's)
 * ARGV[13] number of history events N
 * ARGV[14..13+N] history events (stored JSON with their chain `hash`, ids hc+1..hc+N)
 * The history head (runtime/audit/chain.ts): the events' hashes are computed in
 * TypeScript from the `hh` read with `hc`; `hh` is checked and set here with
 * `hc`, so the chain moves only with the append (when N > 0; otherwise ARGV[11]
 * and ARGV[12] are not looked at).
 * then ops, each an op name followed by its arguments:
 *   push   run event front("1"|"0")      deliver an event to another run (or this one)
 *   spawn  run state startedEvent         create a child run and start it
 *   arm    member atMs                    arm a timer
 *   disarm member                         cancel a timer
 *   task   task record token mode activity  register a task (mode call|activity|park)
 *   untask task why                       forget a task; its token answers `why`
 *   end    exec status output error cause stoppedAt timeoutMember keepSeconds
 *                                        the execution ended; its keys expire after
 *                                        keepSeconds (0 = never)
 *   expire seconds                       this (child) run ended: its keys expire
 *   input set version json | input drop  the frame input kept apart from the state
 *                                        (run hash fields `in`, `iv`; see
 *                                        runtime/frame-input.ts): write it, or drop it
 *   joined join index output parent event keepSeconds
 *                                        this child run ended: keep its output (JSON,
 *                                        "null" unless it succeeded) in the join's
 *                                        hash `jr:<join>` field index and, the first
 *                                        time only, push `event` (ChildEnded) to the
 *                                        parent; the hash expires after keepSeconds
 *   stopjoin join started                push Stop in front to each child
 *                                        `<join>/0..started-1` not in `jr:<join>`
 *                                        (still running); drop `ji:<join>`
 *   keep   join n keepSeconds (index output)*
 *                                        set these fields of `jr:<join>` where absent
 *                                        (outputs of a join stored the old way)
 *   inputs join from n keepSeconds input*
 *                                        keep the inputs of a Map window's later
 *                                        children in `ji:<join>`, field from + k
 *   spawnkept run state join index       as spawn, with the input kept in
 *                                        `ji:<join>` field index (taken out of it)
 *   collect join total head              push `head .. outputs .. ']}'` (the join's
 *                                        outputs 0..total-1 in order, 'null' where
 *                                        missing) in front of this run's inbox, and
 *                                        delete `jr:<join>`
 *   approval id n (field value)*         create approval record `ap:<id>` with these
 *                                        n fields, index it PENDING (approval-lua.ts)
 *   apclose id status                    a PENDING approval's task ended without a
 *                                        decision: status EXPIRED or CANCELLED
 *   usage  field amount                  add amount to the execution hash's field
 *                                        (model usage totals, runtime/usage.ts)
 *
 * Returns:
 *   {1, newSeq, fx, head}  committed; fx = follow-up jobs, space-separated:
 *                    `s<run>@<seq>` (transition) or `k<task>` (task call);
 *                    head = the run's next inbox event (nil when none), so a
 *                    chained transition need not load it
 *   {-1, seq, fx}    stale: the run is past the expected seq (fx: its last commit's)
 *   {-2, hc, paused, hh} another run of this execution wrote history first: re-step with
 *                    ids from hc + 1, chained on hh (unless `paused`: the execution was
 *                    paused meanwhile, load again)
 *   {-3}             no such run
 *   {-4}             the inbox head changed (a stop was put in front): re-step
 */
export const commitTransition: ScriptSpec = {
  name: "commitTransition",
  keys: 8,
  lua: `${RUN_STATE_LUA}${END_EXECUTION_LUA}
${APPROVAL_LUA}
local base, self = ARGV[1], ARGV[2]
local seq = redis.call('HGET', KEYS[1], 'q')
if not seq then return {-3} end
if seq ~= ARGV[3] then return {-1, tonumber(seq), redis.call('HGET', KEYS[1], 'fx') or ''} end
if redis.call('LINDEX', KEYS[2], 0) ~= ARGV[10] then return {-4} end
local nh = tonumber(ARGV[13])
if nh > 0 then
  local x = redis.call('HMGET', KEYS[3], 'hc', 'hh', 'ps')
  local hc, hh = x[1] or '0', x[2] or ''
  if hc ~= ARGV[4] or hh ~= ARGV[11] then return {-2, tonumber(hc), x[3], hh} end
  redis.call('HSET', KEYS[3], 'hc', tonumber(hc) + nh, 'hh', ARGV[12])
  for i = 14, 13 + nh, 1000 do
    redis.call('RPUSH', KEYS[4], unpack(ARGV, i, math.min(i + 999, 13 + nh)))
  end
end
redis.call('LPOP', KEYS[2])
local newSeq = tonumber(seq) + 1
redis.call('RPUSH', KEYS[5], ARGV[6])
local now = tonumber(ARGV[7])
local lease = now + tonumber(ARGV[8])
local ensure, woken = {}, {}
local function wake(run)
  if run == self or woken[run] then return end
  woken[run] = true
  local q = redis.call('HGET', base .. 'r:' .. run, 'q')
  if not q then return end
  redis.call('ZADD', KEYS[6], lease, 'r:' .. run)
  ensure[#ensure + 1] = 's' .. run .. '@' .. q
end
local i = 14 + nh
local n = #ARGV
while i <= n do
  local op = ARGV[i]
  if op == 'push' then
    local run = ARGV[i + 1]
    if run == self or redis.call('EXISTS', base .. 'r:' .. run) == 1 then
      if ARGV[i + 3] == '1' then
        redis.call('LPUSH', base .. 'i:' .. run, ARGV[i + 2])
      else
        redis.call('RPUSH', base .. 'i:' .. run, ARGV[i + 2])
      end
      wake(run)
    end
    i = i + 4
  elseif op == 'spawn' then
    local run = ARGV[i + 1]
    redis.call('HSET', base .. 'r:' .. run, 'q', 0)
    putState(base .. 'r:' .. run, ARGV[i + 2])
    redis.call('RPUSH', base .. 'i:' .. run, ARGV[i + 3])
    wake(run)
    i = i + 4
  elseif op == 'arm' then
    if redis.call('ZADD', KEYS[6], ARGV[i + 2], ARGV[i + 1]) == 1 then
      redis.call('HINCRBY', base .. 'stats', 'timers', 1)
    end
    i = i + 3
  elseif op == 'disarm' then
    if redis.call('ZREM', KEYS[6], ARGV[i + 1]) == 1 then
      redis.call('HINCRBY', base .. 'stats', 'timers', -1)
    end
    i = i + 2
  elseif op == 'task' then
    local task, token, mode = ARGV[i + 1], ARGV[i + 3], ARGV[i + 4]
    redis.call('HSET', KEYS[7], task, ARGV[i + 2])
    if token ~= '' then redis.call('HSET', KEYS[8], token, task) end
    if mode == 'call' then
      redis.call('ZADD', KEYS[6], lease, 'k:' .. task)
      ensure[#ensure + 1] = 'k' .. task
    elseif mode == 'activity' then
      redis.call('RPUSH', base .. 'act:' .. ARGV[i + 5], task)
    end
    i = i + 6
  elseif op == 'untask' then
    local task = ARGV[i + 1]
    local rec = redis.call('HGET', KEYS[7], task)
    if rec then
      redis.call('HDEL', KEYS[7], task)
      local r = cjson.decode(rec)
      local token = r.token
      -- Not taken by a worker yet: out of the activity's list, or a poll would wade through it.
      if r.activity then redis.call('LREM', base .. 'act:' .. r.activity, 1, task) end
      if token then
        redis.call('HDEL', KEYS[8], token)
        redis.call('SET', base .. 'tomb:' .. token, ARGV[i + 2], 'EX', ARGV[9])
      end
    end
    redis.call('ZREM', KEYS[6], 'k:' .. task)
    i = i + 3
  elseif op == 'end' then
    endExecution(base, KEYS[3], KEYS[6], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], ARGV[i + 4],
      ARGV[i + 5], ARGV[i + 6], ARGV[i + 7], ARGV[i + 8], {KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]})
    i = i + 9
  elseif op == 'input' then
    if ARGV[i + 1] == 'set' then
      redis.call('HSET', KEYS[1], 'iv', ARGV[i + 2], 'in', ARGV[i + 3])
      i = i + 4
    else
      redis.call('HDEL', KEYS[1], 'iv', 'in')
      i = i + 2
    end
  elseif op == 'joined' then
    local jr = base .. 'jr:' .. ARGV[i + 1]
    if redis.call('HSETNX', jr, ARGV[i + 2], ARGV[i + 3]) == 1 then
      local run = ARGV[i + 4]
      if redis.call('EXISTS', base .. 'r:' .. run) == 1 then
        redis.call('RPUSH', base .. 'i:' .. run, ARGV[i + 5])
        wake(run)
      end
    end
    local keep = tonumber(ARGV[i + 6])
    if keep > 0 then redis.call('EXPIRE', jr, keep) end
    i = i + 7
  elseif op == 'stopjoin' then
    local join = ARGV[i + 1]
    local jr = base .. 'jr:' .. join
    for c = 0, tonumber(ARGV[i + 2]) - 1 do
      if redis.call('HEXISTS', jr, c) == 0 then
        local run = join .. '/' .. c
        if redis.call('EXISTS', base .. 'r:' .. run) == 1 then
          redis.call('LPUSH', base .. 'i:' .. run, '{"type":"Stop"}')
          wake(run)
        end
      end
    end
    -- A stopped join starts no more children: their kept inputs go.
    redis.call('DEL', base .. 'ji:' .. join)
    i = i + 3
  elseif op == 'keep' then
    local jr, n = base .. 'jr:' .. ARGV[i + 1], tonumber(ARGV[i + 2])
    for k = 0, n - 1 do
      redis.call('HSETNX', jr, ARGV[i + 4 + 2 * k], ARGV[i + 5 + 2 * k])
    end
    local keep = tonumber(ARGV[i + 3])
    if n > 0 and keep > 0 then redis.call('EXPIRE', jr, keep) end
    i = i + 4 + 2 * n
  elseif op == 'inputs' then
    local ji, from, n = base .. 'ji:' .. ARGV[i + 1], tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3])
    for first = 0, n - 1, 500 do
      local fields = {}
      for k = first, math.min(first + 499, n - 1) do
        fields[#fields + 1] = from + k
        fields[#fields + 1] = ARGV[i + 5 + k]
      end
      redis.call('HSET', ji, unpack(fields))
    end
    local keep = tonumber(ARGV[i + 4])
    if keep > 0 then redis.call('EXPIRE', ji, keep) end
    i = i + 5 + n
  elseif op == 'spawnkept' then
    local run, ji = ARGV[i + 1], base .. 'ji:' .. ARGV[i + 3]
    -- Taken out as children start: the hash holds only the inputs still to start,
    -- and Redis deletes it with the last one.
    local input = redis.call('HGET', ji, ARGV[i + 4]) or 'null'
    redis.call('HDEL', ji, ARGV[i + 4])
    redis.call('HSET', base .. 'r:' .. run, 'q', 0)
    putState(base .. 'r:' .. run, ARGV[i + 2])
    redis.call('RPUSH', base .. 'i:' .. run, '{"type":"Started","input":' .. input .. '}')
    wake(run)
    i = i + 5
  elseif op == 'collect' then
    local jr, total = base .. 'jr:' .. ARGV[i + 1], tonumber(ARGV[i + 2])
    local parts = {}
    for first = 0, total - 1, 1000 do
      local fields = {}
      for c = first, math.min(first + 999, total - 1) do fields[#fields + 1] = c end
      local values = redis.call('HMGET', jr, unpack(fields))
      for k = 1, #values do parts[#parts + 1] = values[k] or 'null' end
    end
    redis.call('DEL', jr)
    redis.call('LPUSH', KEYS[2], ARGV[i + 3] .. table.concat(parts, ',') .. ']}')
    i = i + 4
  -- [approvals] records of approval tasks (runtime/approval-record.ts)
  elseif op == 'approval' then
    local n = tonumber(ARGV[i + 2])
    openApproval(base, ARGV[i + 1], {unpack(ARGV, i + 3, i + 2 + 2 * n)})
    i = i + 3 + 2 * n
  elseif op == 'apclose' then
    closeApproval(base, ARGV[i + 1], ARGV[i + 2], now)
    i = i + 3
  -- [/approvals]
  elseif op == 'usage' then
    redis.call('HINCRBYFLOAT', KEYS[3], ARGV[i + 1], ARGV[i + 2])
    i = i + 3
  elseif op == 'expire' then
    redis.call('EXPIRE', KEYS[1], ARGV[i + 1])
    redis.call('EXPIRE', KEYS[2], ARGV[i + 1])
    i = i + 2
  else
    return redis.error_reply('commitTransition: unknown op ' .. tostring(op))
  end
end
if redis.call('LLEN', KEYS[2]) > 0 then
  redis.call('ZADD', KEYS[6], lease, 'r:' .. self)
  ensure[#ensure + 1] = 's' .. self .. '@' .. newSeq
else
  redis.call('ZREM', KEYS[6], 'r:' .. self)
end
local fx = table.concat(ensure, ' ')
putState(KEYS[1], ARGV[5])
if fx == '' then
  redis.call('HSET', KEYS[1], 'q', newSeq)
  redis.call('HDEL', KEYS[1], 'fx')
else
  redis.call('HSET', KEYS[1], 'q', newSeq, 'fx', fx)
end
return {1, newSeq, fx, redis.call('LINDEX', KEYS[2], 0)}
`,
};
