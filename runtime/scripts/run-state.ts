/**
 * Lua helpers shared by the scripts that write or read a run's state.
 *
 * A run hash holds `q` (seq), `fx` (last follow-ups) and the state. Redis keeps a
 * hash in its compact listpack encoding only while every value is at most
 * `hash-max-listpack-value` bytes (64 by default); one state value of a few
 * hundred bytes would turn the whole hash into a hashtable, about 200 bytes more
 * per run. So the (packed, see runtime/codec.ts) state is stored in 64-byte
 * slices `s1`..`sN` with `n` = N. Past 120 slices (~7.5 KB packed) the hash
 * would become a hashtable anyway (`hash-max-listpack-entries`), so a large state
 * goes into the one field `s` with `n` = 0: writing thousands of slices per
 * transition of a big Map's parent would cost far more than it saves.
 *
 * A large input of the run's current state is kept apart, in field `in` (with
 * its version `iv`), and left out of the state (runtime/frame-input.ts): it is
 * written when the run enters a state, not again at each of its transitions there.
 */
export const RUN_STATE_LUA = `
local function putState(key, state)
  local old = tonumber(redis.call('HGET', key, 'n') or '0')
  if #state > 64 * 120 then
    -- Past hash-max-listpack-entries the hash is a hashtable anyway: one field is cheaper.
    redis.call('HSET', key, 'n', 0, 's', state)
    for i = 1, old do redis.call('HDEL', key, 's' .. i) end
    return
  end
  local n = math.max(1, math.ceil(#state / 64))
  local args = {'n', n}
  for i = 1, n do
    args[#args + 1] = 's' .. i
    args[#args + 1] = string.sub(state, (i - 1) * 64 + 1, i * 64)
  end
  redis.call('HSET', key, unpack(args))
  for i = n + 1, old do redis.call('HDEL', key, 's' .. i) end
  if old == 0 then redis.call('HDEL', key, 's') end
end
local function getState(key)
  local n = tonumber(redis.call('HGET', key, 'n') or '0')
  -- n = 0: one field, as large states are kept.
  if n == 0 then return redis.call('HGET', key, 's') end
  local fields = {}
  for i = 1, n do fields[i] = 's' .. i end
  return table.concat(redis.call('HMGET', key, unpack(fields)))
end
`;
