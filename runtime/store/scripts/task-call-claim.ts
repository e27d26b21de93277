import { defineScript } from "../lua/spec.js";

/**
 * What a worker does with its claim on calling a task (runtime/worker/task-jobs.ts):
 * take it before the call, renew it while the call runs, release it when the call
 * is over without an answer delivered (a delivery drops it: store/scripts/complete-task.ts).
 */
export type TaskCallClaimArgs =
  | {
      action: "claim";
      task: string;
      owner: string;
      now: number;
      leaseMs: number;
      /** Fields of the execution's record to answer with (budget, spend, trace). */
      read: string[];
    }
  | { action: "renew"; task: string; owner: string; now: number; leaseMs: number }
  | { action: "release"; task: string; owner: string };

export type TaskCallClaimReply =
  /**
   * Claimed: the pending task's record (JSON) comes with it, and the execution's
   * `read` fields (false where unset), so the call needs no other round trip.
   */
  | { kind: "claimed"; record: string; fields: (string | false)[] }
  /** Another worker's live claim: it is calling the task now. */
  | { kind: "held" }
  /** The task is no longer pending (answered, timed out, stopped). */
  | { kind: "gone" }
  /** Renewed or released; or, for this owner, nothing left to renew or release. */
  | { kind: "done" };

/**
 * taskCallClaim: at most one call of a pending task at a time, whoever asks for
 * it (the worker that committed it, calling it at once, or a `tasks` job).
 *
 * The claim is a string key (`kc:<task>` = owner) that expires with the task's
 * lease in the schedule (`k:<task>`), and both are renewed together while the call
 * runs. A worker that dies mid-call lets both run out: the scheduler then hands
 * the task's job to the queue (store/scripts/claim-due.ts), which claims it again and
 * calls once more with the same idempotency key, as after any crash.
 */
export const taskCallClaim = defineScript<TaskCallClaimArgs, TaskCallClaimReply>()({
  name: "taskCallClaim",
  keys: ["tasks", "claim", "schedule", "execution"],
  replies: ["claimed", "held", "gone", "done"],
  lua: `
local a = ARG
if a.action == 'claim' then
  local record = redis.call('HGET', KEY.tasks, a.task)
  if not record then return reply('gone') end
  if not redis.call('SET', KEY.claim, a.owner, 'NX', 'PX', a.leaseMs) then return reply('held') end
  redis.call('ZADD', KEY.schedule, 'XX', a.now + a.leaseMs, MEMBER.task .. a.task)
  return reply('claimed', {record = record, fields = redis.call('HMGET', KEY.execution, unpack(a.read))})
end
if redis.call('GET', KEY.claim) ~= a.owner then return reply('done') end
if a.action == 'renew' then
  redis.call('PEXPIRE', KEY.claim, a.leaseMs)
  redis.call('ZADD', KEY.schedule, 'XX', a.now + a.leaseMs, MEMBER.task .. a.task)
else
  redis.call('DEL', KEY.claim)
end
return reply('done')
`,
});
