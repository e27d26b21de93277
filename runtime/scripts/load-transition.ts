import { RUN_STATE_LUA } from "./run-state.js";
import type { ScriptSpec } from "./spec.js";

/**
 * loadTransition: one consistent snapshot of what a transition needs.
 *
 * KEYS[1] run hash, KEYS[2] run inbox, KEYS[3] execution hash
 * ARGV[1] the version of the run's frame input the caller holds ('' if none)
 * Returns {state, seq, inboxHead, hc, fx, input, inputVersion, paused, hh} (false where
 * absent; `paused` is the execution's pause, scripts/pause-execution.ts; `hh` the
 * history chain head read with `hc`, runtime/audit/chain.ts, '' when none),
 * or {} when the run does not exist. `input` is the frame input kept apart from the
 * state (field `in`, runtime/frame-input.ts), sent only when its version (`iv`) is
 * not the caller's.
 */
export const loadTransition: ScriptSpec = {
  name: "loadTransition",
  keys: 3,
  lua: `${RUN_STATE_LUA}
local run = redis.call('HMGET', KEYS[1], 'q', 'fx', 'iv')
if not run[1] then return {} end
local input = false
if run[3] and run[3] ~= ARGV[1] then input = redis.call('HGET', KEYS[1], 'in') end
local x = redis.call('HMGET', KEYS[3], 'hc', 'ps', 'hh')
return {getState(KEYS[1]), run[1], redis.call('LINDEX', KEYS[2], 0), x[1] or '0', run[2], input, run[3], x[2], x[3] or ''}
`,
};
