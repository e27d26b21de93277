/**
 * Lua helpers shared by the scripts that write or read a run's state.
 *
 * A run hash holds `q` (seq), `fx` (last follow-ups) and the state. Redis keeps a
 * hash in its compact listpack encoding only while every value is at most
 * `hash-max-listpack-value` bytes (64 by default); one state value of a few
 * hundred bytes would turn the whole hash into a hashtable, about 200 bytes more
 * per run. So the (packed, see runtime/codec.ts) state is stored in 64-byte
 * slices `s1`..`sN` with `n` = N. A run whose state grows past ~8 KB packed turns
 * the hash into a hashtable anyway (`hash-max-listpack-entries`); that only costs
 * memory, nothing else changes.
 */
export const RUN_STATE_LUA = `
local function putState(key, state)
  local n = math.max(1, math.ceil(#state / 64))
  local old = tonumber(redis.call('HGET', key, 'n') or '0')
  local args = {'n', n}
  for i = 1, n do
    args[#args + 1] = 's' .. i
    args[#args + 1] = string.sub(state, (i - 1) * 64 + 1, i * 64)
  end
  redis.call('HSET', key, unpack(args))
  for i = n + 1, old do redis.call('HDEL', key, 's' .. i) end
end
local function getState(key)
  local n = tonumber(redis.call('HGET', key, 'n') or '0')
  if n == 0 then return false end
  local fields = {}
  for i = 1, n do fields[i] = 's' .. i end
  return table.concat(redis.call('HMGET', key, unpack(fields)))
end
`;
