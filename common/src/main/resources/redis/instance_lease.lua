-- The API instances' leases: a sorted set of instance -> its latest heartbeat, on Redis's clock. An instance
-- has lapsed once another one has beaten at least a lease after it did: it stopped while the others went on
-- (killed, or cut off). Measured against the newest beat, not against the clock alone, so that a Redis that
-- refused every write for a while (out of memory) lapses nobody when the heartbeats come back together, and
-- a lone instance never lapses (its reservations wait out the reconciler's grace instead).
-- KEYS[1] the leases
-- ARGV[1] 'beat' (ARGV[2] the instance) | 'lapsed' (ARGV[2] the lease in ms) | 'forget' (ARGV[2] the lease
-- in ms, then the instances to forget: each only if it has still lapsed)
-- Returns: beat, the heartbeat's time; lapsed, the lapsed instances; forget, how many were forgotten
local op = ARGV[1]
if op == 'beat' then
    local now = redisMillis()
    redis.call('ZADD', KEYS[1], now, ARGV[2])
    return now
end
local newest = redis.call('ZRANGE', KEYS[1], 0, 0, 'REV', 'WITHSCORES')
if #newest == 0 then
    return op == 'lapsed' and {} or 0
end
local before = tonumber(newest[2]) - tonumber(ARGV[2])
if op == 'lapsed' then
    return redis.call('ZRANGE', KEYS[1], '-inf', before, 'BYSCORE')
end
local forgotten = 0
for i = 3, #ARGV do
    local beat = redis.call('ZSCORE', KEYS[1], ARGV[i])
    if beat and tonumber(beat) <= before then
        forgotten = forgotten + redis.call('ZREM', KEYS[1], ARGV[i])
    end
end
return forgotten
