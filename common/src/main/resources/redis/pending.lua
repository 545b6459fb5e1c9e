-- Lists a sale's reservations still holding stock that were reserved at least ARGV[1] ms ago, oldest first,
-- by Redis's own clock (the score is Redis's TIME when the reservation was made, or last claimed): no host clock is compared
-- with another host's.
-- KEYS[1] pending set
-- ARGV: minAgeMillis, offset, limit
-- Returns {nowMillis, orderId, reservedAtMillis, orderId, reservedAtMillis, ...}
local now = redisMillis()
local result = {tostring(now)}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]), 'WITHSCORES', 'LIMIT',
    tonumber(ARGV[2]), tonumber(ARGV[3]))
for i = 1, #due do
    result[#result + 1] = due[i]
end
return result
