-- A fixed-window counter for one shopper: the first request of a window starts it (and its TTL), every
-- request counts. Atomic, so the counter can never exist without its TTL. An admitted attempt that
-- carries an Idempotency-Key also binds it here (SET NX), in the same round trip: both keys carry the
-- shopper's hash tag, so the script runs unchanged on Redis Cluster.
-- KEYS[1] the shopper's counter; KEYS[2] (optional) the Idempotency-Key's binding
-- ARGV: windowMillis, limit; with KEYS[2]: the binding's value, its TTL in milliseconds
-- Returns {wait, stored}: wait is 0 when the attempt is admitted, else the milliseconds until the window
-- ends (nothing is bound then); stored is false when the key was bound now (or none was given), else the
-- value it was bound to before
-- A shopper's first attempt of a window (most of a sale's purchases) starts it in one command; a later one
-- counts on.
local count = 1
if not redis.call('SET', KEYS[1], 1, 'NX', 'PX', ARGV[1]) then
    count = redis.call('INCR', KEYS[1])
    if count == 1 then
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
    end
end
if count > tonumber(ARGV[2]) then
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then
        redis.call('PEXPIRE', KEYS[1], ARGV[1])
        ttl = tonumber(ARGV[1])
    end
    return {ttl, false}
end
if #KEYS == 1 or redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ARGV[4]) then
    return {0, false}
end
return {0, redis.call('GET', KEYS[2])}
