import type { ScriptSpec } from "./spec.js";

/**
 * claimActivityTask: gives the oldest pending task of an activity to one poller,
 * and tells its run (a TaskStarted event with the worker's name: AWS records
 * ActivityStarted). Tasks cancelled meanwhile (timeout, stop) are skipped and dropped.
 *
 * KEYS[1] activity list, KEYS[2] tasks hash, KEYS[3] schedule zset
 * ARGV[1] worker name ('' = none), ARGV[2] key base, ARGV[3] execution ARN prefix,
 * ARGV[4] lease deadline (ms)
 * Returns {task, record, run, seq} (enqueue `<run>@<seq>`) or {} when none is waiting.
 */
export const claimActivityTask: ScriptSpec = {
  name: "claimActivityTask",
  keys: 3,
  lua: `
while true do
  local task = redis.call('LPOP', KEYS[1])
  if not task then return {} end
  local rec = redis.call('HGET', KEYS[2], task)
  if rec then
    local run = string.match(task, '^(.*)#[^#]*$')
    local q = redis.call('HGET', ARGV[2] .. 'r:' .. run, 'q')
    if q then
      local event = {type = 'TaskStarted', taskId = ARGV[3] .. task}
      if ARGV[1] ~= '' then event.workerName = ARGV[1] end
      redis.call('RPUSH', ARGV[2] .. 'i:' .. run, cjson.encode(event))
      redis.call('ZADD', KEYS[3], ARGV[4], 'r:' .. run)
      return {task, rec, run, q}
    end
  end
end
`,
};
