import { APPROVAL_FEED_LENGTH } from "../keys.js";

/**
 * Lua helpers shared by the scripts that create an approval record or change its
 * status (commitTransition's `approval` / `apclose` ops, decideApproval). The
 * record is the hash `ap:<id>` (fields `APPROVAL`, store/fields.ts); Lua parses
 * none of its JSON but the assignment's (an escalation adds its groups there), it
 * moves the id between the inbox indexes and appends to the webhook outbox.
 *
 * Indexes: `apx:<status>|<dim>` for every `<group>|<machine>` dim of the record
 * (`APPROVAL.indexDims`, computed in TypeScript), and `apx:*|<dim>` for any status;
 * scores are the creation time (`APPROVAL.createdAt`). Outbox: when the record's
 * `APPROVAL.notify` is '1', each change XADDs `{e: event, id}` to `apev` in the
 * same script, so a notification can be late but never lost
 * (runtime/approvals/approval-webhooks.ts drains it). Every change also goes to
 * the capped feed `apfeed`, which live clients read (SSE).
 */
export const APPROVAL_LUA = `
local function approvalIndex(base, id, key, from, to)
  local f = hmgetNamed(key, APPROVAL, {'indexDims', 'createdAt'})
  for dim in string.gmatch(f.indexDims or '', '%S+') do
    if from then redis.call('ZREM', base .. KIND.approvalIndex .. from .. '|' .. dim, id) end
    redis.call('ZADD', base .. KIND.approvalIndex .. to .. '|' .. dim, f.createdAt, id)
  end
end
local function approvalEvent(base, key, id, event)
  redis.call('XADD', base .. KIND.approvalFeed, 'MAXLEN', '~', '${APPROVAL_FEED_LENGTH}', '*', 'e', event, 'id', id)
  if redis.call('HGET', key, APPROVAL.notify) == '1' then
    redis.call('XADD', base .. KIND.approvalEvents, '*', 'e', event, 'id', id)
  end
end
local function approvalEnded(key)
  local keep = tonumber(redis.call('HGET', key, APPROVAL.keepSeconds) or '0')
  if keep > 0 then redis.call('EXPIRE', key, keep) end
end
local function openApproval(base, id, fields)
  local key = base .. KIND.approval .. id
  redis.call('HSET', key, unpack(fields))
  approvalIndex(base, id, key, nil, '*')
  approvalIndex(base, id, key, nil, 'PENDING')
  approvalEvent(base, key, id, 'approval.created')
end
-- Human tasks: groups that may decide besides the envelope's (delegation, escalation)
-- get the record's index dims, so the inbox's group filter finds it under them.
local function approvalAddGroups(base, id, key, groups)
  local f = hmgetNamed(key, APPROVAL, {'indexDims', 'createdAt', 'status'})
  local dims, have, machine = {}, {}, nil
  for dim in string.gmatch(f.indexDims or '', '%S+') do
    dims[#dims + 1] = dim
    have[dim] = true
    local m = string.match(dim, '^%*|(.+)$')
    if m and m ~= '*' then machine = m end
  end
  for _, g in ipairs(groups) do
    for _, dim in ipairs({g .. '|*', machine and (g .. '|' .. machine) or nil}) do
      if not have[dim] then
        have[dim] = true
        dims[#dims + 1] = dim
        redis.call('ZADD', base .. KIND.approvalIndex .. '*|' .. dim, f.createdAt, id)
        redis.call('ZADD', base .. KIND.approvalIndex .. f.status .. '|' .. dim, f.createdAt, id)
      end
    end
  end
  redis.call('HSET', key, APPROVAL.indexDims, table.concat(dims, ' '))
end
-- Human tasks: a reminder or an escalation of a PENDING approval. Escalating adds the
-- groups to the assignment's escalatedTo (approvals/approval-record.ts Assignment).
local function noticeApproval(base, id, event, groups)
  local key = base .. KIND.approval .. id
  if redis.call('HGET', key, APPROVAL.status) ~= 'PENDING' then return false end
  if #groups > 0 then
    local raw = redis.call('HGET', key, APPROVAL.assignment)
    local a = (raw and raw ~= '') and cjson.decode(raw) or {}
    local seen, list = {}, {}
    for _, g in ipairs(a.escalatedTo or {}) do seen[g] = true list[#list + 1] = g end
    for _, g in ipairs(groups) do
      if not seen[g] then seen[g] = true list[#list + 1] = g end
    end
    a.escalatedTo = list
    redis.call('HSET', key, APPROVAL.assignment, cjson.encode(a))
    approvalAddGroups(base, id, key, groups)
  end
  approvalEvent(base, key, id, event)
  return true
end
local function closeApproval(base, id, status, now)
  local key = base .. KIND.approval .. id
  if redis.call('HGET', key, APPROVAL.status) ~= 'PENDING' then return false end
  redis.call('HSET', key, APPROVAL.status, status, APPROVAL.closedAt, now)
  approvalIndex(base, id, key, 'PENDING', status)
  approvalEnded(key)
  approvalEvent(base, key, id, 'approval.' .. string.lower(status))
  return true
end
`;
