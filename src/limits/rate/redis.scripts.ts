/**
 * Lua scripts run atomically by Redis, so replicas never interleave a check with an
 * update. Time comes from Redis (`TIME`), not from the replicas' clocks. Bucket hashes
 * hold `l` (level, float) and `t` (ms of the last update) and expire once full again;
 * lease sets are sorted sets of lease ids scored by expiry.
 */

/**
 * KEYS: one per spec. ARGV[1]: lease ttl (ms); then four per spec:
 * bucket: 'b', capacity, cost, window ms; lease: 'l', capacity, lease id, ''.
 * Returns { refused index (1-based, 0 = allowed), retry ms (-1 = never), redis ms,
 * then remaining, reset ms per spec }.
 */
export const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
local n = #KEYS
local level = {}
local refused = 0
local retry = 0
for i = 1, n do
  local o = 1 + (i - 1) * 4
  local cap = tonumber(ARGV[o + 2])
  local wait = nil
  if ARGV[o + 1] == 'b' then
    local cost, win = tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
    local s = redis.call('HMGET', KEYS[i], 'l', 't')
    local l, at = tonumber(s[1]), tonumber(s[2])
    if l == nil then
      l = cap
    elseif now > at then
      l = math.min(cap, l + (now - at) * cap / win)
    end
    level[i] = l
    if l < cost then
      if cost > cap then wait = -1 else wait = math.ceil((cost - l) * win / cap) end
    end
  else
    redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
    local used = redis.call('ZCARD', KEYS[i])
    level[i] = used
    if used >= cap then wait = 1000 end
  end
  if wait ~= nil then
    if refused == 0 then refused = i end
    if retry < 0 or wait < 0 then retry = -1 elseif wait > retry then retry = wait end
  end
end
local out = { refused, retry, now }
for i = 1, n do
  local o = 1 + (i - 1) * 4
  local cap = tonumber(ARGV[o + 2])
  if ARGV[o + 1] == 'b' then
    local cost, win = tonumber(ARGV[o + 3]), tonumber(ARGV[o + 4])
    local l = level[i]
    if refused == 0 then
      l = l - cost
      redis.call('HSET', KEYS[i], 'l', tostring(l), 't', now)
      redis.call('PEXPIRE', KEYS[i], math.ceil((cap - l) * win / cap) + 1000)
    end
    out[#out + 1] = math.floor(l)
    out[#out + 1] = math.max(0, math.ceil((cap - l) * win / cap))
  else
    local used = level[i]
    if refused == 0 then
      redis.call('ZADD', KEYS[i], now + ttl, ARGV[o + 3])
      redis.call('PEXPIRE', KEYS[i], ttl * 2)
      used = used + 1
    end
    out[#out + 1] = cap - used
    out[#out + 1] = 0
  end
end
return out
`;

/** KEYS: buckets. ARGV[1]: delta (units of use to add; negative gives back); then capacity, window ms per key. */
export const ADJUST = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local delta = tonumber(ARGV[1])
for i = 1, #KEYS do
  local cap, win = tonumber(ARGV[i * 2]), tonumber(ARGV[i * 2 + 1])
  local s = redis.call('HMGET', KEYS[i], 'l', 't')
  local l, at = tonumber(s[1]), tonumber(s[2])
  if l == nil then
    l = cap
  elseif now > at then
    l = math.min(cap, l + (now - at) * cap / win)
  end
  l = math.min(cap, l - delta)
  if l >= cap then
    redis.call('DEL', KEYS[i])
  else
    redis.call('HSET', KEYS[i], 'l', tostring(l), 't', now)
    redis.call('PEXPIRE', KEYS[i], math.ceil((cap - l) * win / cap) + 1000)
  end
end
return 1
`;

/** KEYS: lease sets. ARGV[1]: ttl ms; then the lease id per key. Extends held leases only. */
export const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[1])
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], 'XX', now + ttl, ARGV[i + 1])
  redis.call('PEXPIRE', KEYS[i], ttl * 2)
end
return 1
`;
