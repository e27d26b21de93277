import { RUN_STATE_LUA } from "./run-state.js";
import type { ScriptSpec } from "./spec.js";

/**
 * loadTransition: one consistent snapshot of what a transition needs.
 *
 * KEYS[1] run hash, KEYS[2] run inbox, KEYS[3] execution hash
 * Returns {state, seq, inboxHead, hc, fx} (false where absent), or {} when the run does not exist.
 */
export const loadTransition: ScriptSpec = {
  name: "loadTransition",
  keys: 3,
  lua: `${RUN_STATE_LUA}
local run = redis.call('HMGET', KEYS[1], 'q', 'fx')
if not run[1] then return {} end
return {getState(KEYS[1]), run[1], redis.call('LINDEX', KEYS[2], 0), redis.call('HGET', KEYS[3], 'hc') or '0', run[2]}
`,
};
