import { APPROVAL_LUA } from "../lua/approval.js";
import { defineScript } from "../lua/spec.js";

export interface DecideApprovalArgs {
  base: string;
  /** The approval's id, and the decision count its record was read with. */
  id: string;
  n: number;
  /** What the decision makes of the record: its decisions (JSON) and status. */
  decisions: string;
  status: "PENDING" | "APPROVED" | "REJECTED";
  /** The ApprovalDecided event for the run (JSON). */
  event: string;
  /**
   * Human tasks: the assignment field the decision was checked against ('' = none;
   * a claim taken meanwhile makes the decision race) and what it becomes.
   */
  assignment?: string;
  nextAssignment?: string;
  now: number;
  leaseMs: number;
  tombstoneSeconds: number;
}

export type DecideApprovalReply =
  /** Recorded and delivered: enqueue the run's `stepJob(run, seq)`. */
  | { kind: "decided"; run: string; seq: number }
  /** The approval is not PENDING (or just expired, or its task ended). */
  | { kind: "notPending"; status: string }
  /** Another decision came first: read again and retry. */
  | { kind: "raced" }
  | { kind: "missing" };

/**
 * decideApproval: records one approver's decision on a PENDING approval and
 * delivers it to the run, atomically, fenced by the record's decision count
 * (the caller read the record, decided in TypeScript what the decision makes of
 * it, and built the event): two concurrent decisions cannot both count.
 *
 * A timer of the approval's task that is no longer armed has fired (claimDue
 * removes it as it pushes TimerFired): the approval is expiring and the run will
 * fail it, so no decision counts any more; the record becomes EXPIRED now.
 *
 * Stop and decide: whichever commits first wins. A Stop queued before (in the root
 * run's inbox, or the execution already ended) refuses the decision and cancels
 * the record in this script; a decision committed before a stop is stepped before
 * it (requestStop queues the Stop behind delivered decisions).
 */
export const decideApproval = defineScript<DecideApprovalArgs, DecideApprovalReply>()({
  name: "decideApproval",
  keys: ["approval", "tasks", "tokens", "schedule"],
  replies: ["decided", "notPending", "raced", "missing"],
  helpers: [APPROVAL_LUA],
  lua: `
local base, key, id = ARG.base, KEY.approval, ARG.id
local f = hmgetNamed(key, APPROVAL, {'status', 'decisionCount', 'timers', 'task', 'run', 'token'})
if not f.status then return reply('missing') end
if f.status ~= 'PENDING' then return reply('notPending', {status = f.status}) end
if tonumber(f.decisionCount) ~= ARG.n then return reply('raced') end
if ARG.assignment ~= nil and (redis.call('HGET', key, APPROVAL.assignment) or '') ~= ARG.assignment then
  return reply('raced')
end
for m in string.gmatch(f.timers or '', '%S+') do
  if not redis.call('ZSCORE', KEY.schedule, m) then
    closeApproval(base, id, 'EXPIRED', ARG.now)
    return reply('notPending', {status = 'EXPIRED'})
  end
end
local task, run, token = f.task, f.run, f.token
local q = redis.call('HGET', base .. KIND.run .. run, RUN.seq)
if not q or redis.call('HEXISTS', KEY.tasks, task) == 0 then
  return reply('notPending', {status = 'CANCELLED'})
end
-- A stop committed first wins: once the execution ended or a Stop waits in its root
-- inbox (requestStop, a timeout, a give-up), no decision counts; the record is
-- CANCELLED now, as the Stop's own step would make it.
local exec = string.match(run, '^[^/]+')
local stopped = redis.call('HGET', base .. KIND.execution .. exec, EXEC.status) ~= 'RUNNING'
if not stopped then
  for _, e in ipairs(redis.call('LRANGE', base .. KIND.inbox .. exec, 0, 63)) do
    if string.find(e, '"type":"Stop"', 1, true) then stopped = true break end
  end
end
if stopped then
  closeApproval(base, id, 'CANCELLED', ARG.now)
  return reply('notPending', {status = 'CANCELLED'})
end
redis.call('HSET', key, APPROVAL.decisions, ARG.decisions, APPROVAL.decisionCount, ARG.n + 1)
if ARG.nextAssignment ~= nil and ARG.nextAssignment ~= ARG.assignment then
  redis.call('HSET', key, APPROVAL.assignment, ARG.nextAssignment)
end
if ARG.status ~= 'PENDING' then
  -- The decision ends the task: its token answers nothing more, as completeTask does.
  redis.call('HSET', key, APPROVAL.status, ARG.status, APPROVAL.closedAt, ARG.now)
  approvalIndex(base, id, key, 'PENDING', ARG.status)
  approvalEnded(key)
  redis.call('HDEL', KEY.tasks, task)
  redis.call('HDEL', KEY.tokens, token)
  redis.call('SET', base .. KIND.tombstone .. token, 'done', 'EX', ARG.tombstoneSeconds)
end
approvalEvent(base, key, id, 'approval.decided')
redis.call('RPUSH', base .. KIND.inbox .. run, ARG.event)
redis.call('ZADD', KEY.schedule, ARG.now + ARG.leaseMs, MEMBER.run .. run)
return reply('decided', {run = run, seq = tonumber(q)})
`,
});
