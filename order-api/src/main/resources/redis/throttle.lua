-- A fixed-window counter for one shopper: the first request of a window starts it (and its TTL), every
-- request counts. Atomic, so the counter can never exist without its TTL.
-- KEYS[1] the shopper's counter
-- ARGV: windowMillis, limit
-- Returns 0 when the request is admitted, else the milliseconds until the window ends
local count = redis.call('INCR', KEYS[1])
if count == 1 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
if count <= tonumber(ARGV[2]) then
    return 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    ttl = tonumber(ARGV[1])
end
return ttl
