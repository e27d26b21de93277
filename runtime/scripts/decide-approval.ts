import { APPROVAL_LUA } from "./approval-lua.js";
import type { ScriptSpec } from "./spec.js";

/**
 * decideApproval: records one approver's decision on a PENDING approval and
 * delivers it to the run, atomically, fenced by the record's decision count `n`
 * (the caller read the record, decided in TypeScript what the decision makes of
 * it, and built the event): two concurrent decisions cannot both count.
 *
 * A timer of the approval's task that is no longer armed has fired (claimDue
 * removes it as it pushes TimerFired): the approval is expiring and the run will
 * fail it, so no decision counts any more; the record becomes EXPIRED now.
 *
 * KEYS[1] approval hash, KEYS[2] tasks hash, KEYS[3] tokens hash, KEYS[4] schedule zset
 * ARGV[1] key base           ARGV[2] expected n        ARGV[3] decisions JSON
 * ARGV[4] new n              ARGV[5] new status (PENDING | APPROVED | REJECTED)
 * ARGV[6] ApprovalDecided event JSON                   ARGV[7] now (ms)
 * ARGV[8] lease (ms)         ARGV[9] tombstone TTL (s)
 *
 * Returns {1, run, seq}  recorded and delivered (enqueue `<run>@<seq>`)
 *         {-1, status}   the approval is not PENDING (or just expired)
 *         {-2}           another decision came first: read again and retry
 *         {-3}           no such approval
 */
export const decideApproval: ScriptSpec = {
  name: "decideApproval",
  keys: 4,
  lua: `${APPROVAL_LUA}
local base, key = ARGV[1], KEYS[1]
local f = redis.call('HMGET', key, 'st', 'n', 'tm', 'task', 'run', 'tok')
if not f[1] then return {-3} end
if f[1] ~= 'PENDING' then return {-1, f[1]} end
if f[2] ~= ARGV[2] then return {-2} end
local id = string.sub(key, #base + 4)
for m in string.gmatch(f[3] or '', '%S+') do
  if not redis.call('ZSCORE', KEYS[4], m) then
    closeApproval(base, id, 'EXPIRED', ARGV[7])
    return {-1, 'EXPIRED'}
  end
end
local task, run, token = f[4], f[5], f[6]
local q = redis.call('HGET', base .. 'r:' .. run, 'q')
if not q or redis.call('HEXISTS', KEYS[2], task) == 0 then return {-1, 'CANCELLED'} end
redis.call('HSET', key, 'ds', ARGV[3], 'n', ARGV[4])
if ARGV[5] ~= 'PENDING' then
  -- The decision ends the task: its token answers nothing more, as completeTask does.
  redis.call('HSET', key, 'st', ARGV[5], 'cl', ARGV[7])
  approvalIndex(base, id, key, 'PENDING', ARGV[5])
  approvalEnded(key)
  redis.call('HDEL', KEYS[2], task)
  redis.call('HDEL', KEYS[3], token)
  redis.call('SET', base .. 'tomb:' .. token, 'done', 'EX', ARGV[9])
end
approvalEvent(base, key, id, 'approval.decided')
redis.call('RPUSH', base .. 'i:' .. run, ARGV[6])
redis.call('ZADD', KEYS[4], tonumber(ARGV[7]) + tonumber(ARGV[8]), 'r:' .. run)
return {1, run, q}
`,
};
