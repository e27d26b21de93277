import { EXECUTION_STATUSES } from "../contract.js";
import type { ScriptSpec } from "./spec.js";

/**
 * purgeExecution: the last step of erasing an ended execution (runtime/purge.ts):
 * its record, history, journal, root run, its approval records and every index
 * entry. The children's keys went before it, in batches; this script goes last
 * because the journal it deletes is what names them, so a purge that died
 * half-way is finished by running it again.
 *
 * KEYS[1] execution hash, KEYS[2] history, KEYS[3] journal, KEYS[4] root run hash,
 * KEYS[5] root inbox, KEYS[6] parked runs, KEYS[7] executions zset, KEYS[8] the
 * machine's executions zset
 * ARGV[1] key base, ARGV[2] execution (short id), ARGV[3..] approval ids
 * Replies: {'purged'}; {'running'} it has not ended (nothing deleted); {'missing'}.
 */
export const purgeExecution: ScriptSpec = {
  name: "purgeExecution",
  keys: 8,
  lua: `
local STATUSES = {${EXECUTION_STATUSES.map((s) => `'${s}'`).join(", ")}}
local base, exec = ARGV[1], ARGV[2]
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'missing'} end
if st == 'RUNNING' then return {'running'} end
for a = 3, #ARGV do
  local id = ARGV[a]
  local key = base .. 'ap:' .. id
  local f = redis.call('HMGET', key, 'ix', 'st')
  for dim in string.gmatch(f[1] or '', '%S+') do
    redis.call('ZREM', base .. 'apx:*|' .. dim, id)
    if f[2] then redis.call('ZREM', base .. 'apx:' .. f[2] .. '|' .. dim, id) end
  end
  redis.call('DEL', key)
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6])
redis.call('ZREM', KEYS[7], exec)
redis.call('ZREM', KEYS[8], exec)
local machine = string.match(exec, '^([^:]+):')
for _, status in ipairs(STATUSES) do
  redis.call('ZREM', base .. 'xst:' .. status, exec)
  if machine then redis.call('ZREM', base .. 'xst:' .. status .. ':' .. machine, exec) end
end
return {'purged'}
`,
};
