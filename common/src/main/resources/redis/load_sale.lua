-- Loads a sale's stock and limits into Redis, once. A sale without this hash is closed, never unlimited.
-- KEYS[1] sale hash
-- ARGV: stock, perUserLimit, startsAtMillis, endsAtMillis
if redis.call('EXISTS', KEYS[1]) == 1 then
    return 0
end
redis.call('HSET', KEYS[1], 'initial', ARGV[1], 'remaining', ARGV[1], 'held', 0, 'buyers', 0,
    'limit', ARGV[2], 'startsAt', ARGV[3], 'endsAt', ARGV[4])
return 1
