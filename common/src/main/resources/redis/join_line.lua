-- Gives a purchase its place in the sale's line: the number of units asked for before it, across every API
-- instance. The line starts with the sale's first place: its front (the places served) covers the units
-- left then, and only the front script (line_front.lua) moves it on. The line lives as long as the sale.
-- KEYS[1] line hash  KEYS[2] sale hash
-- ARGV: quantity, roundMillis
-- Returns {place, front, next, roundEnd, remaining, held, givenUp} | {} when the sale has no state in Redis
local sale = redis.call('HMGET', KEYS[2], 'remaining', 'held', 'endsAt')
if not sale[1] then
    return {}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'next', 0, 'front', sale[1], 'roundEnd', now + tonumber(ARGV[2]), 'mark', 0,
        'markRemaining', sale[1], 'givenUp', 0)
    redis.call('PEXPIREAT', KEYS[1], math.max(now, tonumber(sale[3])) + 3600000)
end
local next = redis.call('HINCRBY', KEYS[1], 'next', tonumber(ARGV[1]))
local line = redis.call('HMGET', KEYS[1], 'front', 'roundEnd', 'givenUp')
return {next - tonumber(ARGV[1]), tonumber(line[1]), next, tonumber(line[2]), tonumber(sale[1]),
    tonumber(sale[2] or '0'), tonumber(line[3])}
