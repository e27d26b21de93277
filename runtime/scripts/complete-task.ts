import type { ScriptSpec } from "./spec.js";

/**
 * completeTask: delivers a task's result (or a heartbeat) to its run, once, and
 * only while the task is pending. Called by the task job with the task id, or by
 * a callback with the task token; the token is checked → task → run atomically.
 *
 * KEYS[1] tasks hash, KEYS[2] tokens hash, KEYS[3] schedule zset
 * ARGV[1] key base
 * ARGV[2] 'id' | 'token'          ARGV[3] task id (short) or token
 * ARGV[4] event JSON without `taskId` (an object with at least one field)
 * ARGV[5] '1' ends the task (success/failure), '0' keeps it (heartbeat)
 * ARGV[6] now (ms)  ARGV[7] lease (ms)  ARGV[8] tombstone TTL (s)  ARGV[9] execution ARN prefix
 *
 * Returns {1, run, seq}  delivered (enqueue the transition job `<run>@<seq>`)
 *         {-1}           unknown token (forged or malformed)
 *         {-2, why}      the token's task ended: 'done' (answered) or 'timedout'
 *         {-3}           no such pending task
 */
export const completeTask: ScriptSpec = {
  name: "completeTask",
  keys: 3,
  lua: `
local base = ARGV[1]
local task = ARGV[3]
if ARGV[2] == 'token' then
  task = redis.call('HGET', KEYS[2], ARGV[3])
  if not task then
    local why = redis.call('GET', base .. 'tomb:' .. ARGV[3])
    if why then return {-2, why} end
    return {-1}
  end
end
local rec = redis.call('HGET', KEYS[1], task)
if not rec then return {-3} end
local run = string.match(task, '^(.*)#[^#]*$')
local q = redis.call('HGET', base .. 'r:' .. run, 'q')
if not q then return {-3} end
if ARGV[5] == '1' then
  redis.call('HDEL', KEYS[1], task)
  redis.call('ZREM', KEYS[3], 'k:' .. task)
  local token = cjson.decode(rec).token
  if token then
    redis.call('HDEL', KEYS[2], token)
    redis.call('SET', base .. 'tomb:' .. token, 'done', 'EX', ARGV[8])
  end
end
local event = '{"taskId":' .. cjson.encode(ARGV[9] .. task) .. ',' .. string.sub(ARGV[4], 2)
redis.call('RPUSH', base .. 'i:' .. run, event)
redis.call('ZADD', KEYS[3], tonumber(ARGV[6]) + tonumber(ARGV[7]), 'r:' .. run)
return {1, run, q}
`,
};
