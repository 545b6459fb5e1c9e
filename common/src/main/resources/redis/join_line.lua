-- Gives a purchase its place in the sale's line: the number of units asked for before it, across every API
-- instance. The line starts with the sale's first place: its front (the places served) covers the units
-- left then, and only the front script (line_front.lua) moves it on. The line lives as long as the sale.
-- A shopper's place is remembered (KEYS[3], shopper -> place:quantity) when ARGV[3] names them: their next
-- attempt without the place (its answer was lost with the instance that gave it) gets the same place back,
-- not one at the back. A block of places (ARGV[3] empty) is handed out by the instance that joined it.
-- KEYS[1] line hash  KEYS[2] sale hash  KEYS[3] the line's places by shopper
-- ARGV: quantity, roundMillis, shopper ('' for a block)
-- Returns {place, front, next, roundEnd, remaining, held, givenUp, buyers} | {} when the sale has no state in
-- Redis (buyers: the sale's count of shoppers who hold or held units, -1 when it has none)
local sale = redis.call('HMGET', KEYS[2], 'remaining', 'held', 'endsAt', 'buyers')
if not sale[1] then
    return {}
end
local now = redisMillis()
if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('HSET', KEYS[1], 'next', 0, 'front', sale[1], 'roundEnd', now + tonumber(ARGV[2]), 'mark', 0,
        'markRemaining', sale[1], 'givenUp', 0)
    redis.call('PEXPIREAT', KEYS[1], math.max(now, tonumber(sale[3])) + 3600000)
end
local place
if ARGV[3] ~= '' then
    local had = redis.call('HGET', KEYS[3], ARGV[3])
    local quantity = had and string.match(had, ':(%d+)$')
    if quantity == ARGV[1] then
        place = tonumber(string.match(had, '^(%d+):'))
    end
end
local line = redis.call('HMGET', KEYS[1], 'front', 'roundEnd', 'givenUp', 'next')
local next = tonumber(line[4])
if not place then
    next = redis.call('HINCRBY', KEYS[1], 'next', tonumber(ARGV[1]))
    place = next - tonumber(ARGV[1])
    if ARGV[3] ~= '' then
        redis.call('HSET', KEYS[3], ARGV[3], string.format('%d:%s', place, ARGV[1]))
        if redis.call('PTTL', KEYS[3]) < 0 then
            redis.call('PEXPIREAT', KEYS[3], math.max(now, tonumber(sale[3])) + 3600000)
        end
    end
end
return {place, tonumber(line[1]), next, tonumber(line[2]), tonumber(sale[1]), tonumber(sale[2] or '0'),
    tonumber(line[3]), tonumber(sale[4] or '-1')}
