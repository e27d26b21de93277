import type { EventTemplate } from "../event-template.js";
import { defineScript } from "../lua/spec.js";

export interface CompleteTaskArgs {
  base: string;
  /** The task: by its id (short), from its task job, or by its token, from a callback. */
  by: { task: string } | { token: string };
  /** The run's event, with `taskId` left for the task (event-template.ts). */
  event: EventTemplate;
  /** What task ids are short for (ids.ts EXECUTION_ARN_PREFIX): the event carries the long id. */
  idPrefix: string;
  /** A result or failure ends the task; a heartbeat or a submission keeps it pending. */
  ends: boolean;
  now: number;
  leaseMs: number;
  tombstoneSeconds: number;
}

export type CompleteTaskReply =
  /**
   * Delivered: enqueue the run's `stepJob(run, seq)`. `head`: the event as stored,
   * when it is the only one in the run's inbox (its next step takes exactly it).
   */
  | { kind: "delivered"; run: string; seq: number; head?: string }
  /** No token like it was ever issued (forged or malformed). */
  | { kind: "unknownToken" }
  /** The token's task ended: answered (`done`) or timed out / stopped (`timedout`). */
  | { kind: "ended"; why: string }
  | { kind: "notPending" };

/**
 * completeTask: delivers a task's result (or a heartbeat) to its run, once, and
 * only while the task is pending. The token is checked → task → run atomically.
 */
export const completeTask = defineScript<CompleteTaskArgs, CompleteTaskReply>()({
  name: "completeTask",
  keys: ["tasks", "tokens", "schedule"],
  replies: ["delivered", "unknownToken", "ended", "notPending"],
  lua: `
local base = ARG.base
local task = ARG.by.task
if ARG.by.token then
  task = redis.call('HGET', KEY.tokens, ARG.by.token)
  if not task then
    local why = redis.call('GET', base .. KIND.tombstone .. ARG.by.token)
    if why then return reply('ended', {why = why}) end
    return reply('unknownToken')
  end
end
local rec = redis.call('HGET', KEY.tasks, task)
if not rec then return reply('notPending') end
local run = string.match(task, '^(.*)#[^#]*$')
local q = redis.call('HGET', base .. KIND.run .. run, RUN.seq)
if not q then return reply('notPending') end
if ARG.ends then
  redis.call('HDEL', KEY.tasks, task)
  redis.call('ZREM', KEY.schedule, MEMBER.task .. task)
  redis.call('DEL', base .. KIND.taskClaim .. task)
  local token = cjson.decode(rec).token
  if token then
    redis.call('HDEL', KEY.tokens, token)
    redis.call('SET', base .. KIND.tombstone .. token, 'done', 'EX', ARG.tombstoneSeconds)
  end
end
local event = fill(ARG.event, cjson.encode(ARG.idPrefix .. task))
local waiting = redis.call('RPUSH', base .. KIND.inbox .. run, event)
redis.call('ZADD', KEY.schedule, ARG.now + ARG.leaseMs, MEMBER.run .. run)
if waiting == 1 then return reply('delivered', {run = run, seq = tonumber(q), head = event}) end
return reply('delivered', {run = run, seq = tonumber(q)})
`,
});
