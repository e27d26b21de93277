import type { ScriptSpec } from "./spec.js";

/**
 * claimActivityTask: gives the oldest pending task of an activity to one poller.
 * Tasks cancelled meanwhile (timeout, stop) are skipped and dropped.
 *
 * KEYS[1] activity list, KEYS[2] tasks hash
 * ARGV[1] worker name
 * Returns {task, record} or {} when none is waiting.
 */
export const claimActivityTask: ScriptSpec = {
  name: "claimActivityTask",
  keys: 2,
  lua: `
while true do
  local task = redis.call('LPOP', KEYS[1])
  if not task then return {} end
  local rec = redis.call('HGET', KEYS[2], task)
  if rec then return {task, rec} end
end
`,
};
