import type { EventTemplate } from "../event-template.js";
import { defineScript } from "../lua/spec.js";

export interface ClaimActivityArgs {
  base: string;
  /** The TaskStarted event for the run, with `taskId` left for the task taken (event-template.ts). */
  started: EventTemplate;
  /** What task ids are short for (ids.ts EXECUTION_ARN_PREFIX): the event carries the long id. */
  idPrefix: string;
  /** The run's lease (ms). */
  leaseUntil: number;
}

export type ClaimActivityReply =
  /** Taken: `record` is the task record (JSON); enqueue the run's `stepJob(run, seq)`. */
  { kind: "claimed"; task: string; record: string; run: string; seq: number } | { kind: "none" };

/**
 * claimActivityTask: gives the oldest pending task of an activity to one poller,
 * and tells its run (a TaskStarted event with the worker's name: AWS records
 * ActivityStarted). Tasks cancelled meanwhile (timeout, stop) are skipped and dropped.
 */
export const claimActivityTask = defineScript<ClaimActivityArgs, ClaimActivityReply>()({
  name: "claimActivityTask",
  keys: ["activity", "tasks", "schedule"],
  replies: ["claimed", "none"],
  lua: `
while true do
  local task = redis.call('LPOP', KEY.activity)
  if not task then return reply('none') end
  local rec = redis.call('HGET', KEY.tasks, task)
  if rec then
    local run = string.match(task, '^(.*)#[^#]*$')
    local q = redis.call('HGET', ARG.base .. KIND.run .. run, RUN.seq)
    if q then
      redis.call('RPUSH', ARG.base .. KIND.inbox .. run, fill(ARG.started, cjson.encode(ARG.idPrefix .. task)))
      redis.call('ZADD', KEY.schedule, ARG.leaseUntil, MEMBER.run .. run)
      return reply('claimed', {task = task, record = rec, run = run, seq = tonumber(q)})
    end
  end
end
`,
});
