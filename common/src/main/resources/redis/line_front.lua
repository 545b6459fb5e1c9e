-- Moves the front of a sale's line on, and reads it. The places before the front share the units; a place
-- behind it gets a unit only once the places ahead have let a whole round pass without taking one (they
-- came back, bought, or gave up). Then the front moves on by the units nobody ahead can still claim:
-- those left, less the units of the places handed out during the round (they have not had a whole round
-- yet). Units given back later (a released reservation) move it on the same way, a round later.
-- Any instance may call it at any time: a round ends once, by Redis's own clock.
-- KEYS[1] line hash  KEYS[2] sale hash
-- ARGV: roundMillis
-- Returns {front, next, roundEnd, remaining, held, givenUp, buyers} | {} when the sale has no line (buyers: the
-- sale's count of shoppers who hold or held units, -1 when it has none)
local line = redis.call('HMGET', KEYS[1], 'front', 'next', 'roundEnd', 'mark', 'markRemaining', 'givenUp')
if not line[1] then
    return {}
end
local sale = redis.call('HMGET', KEYS[2], 'remaining', 'held', 'buyers')
local remaining = tonumber(sale[1] or '0')
local held = tonumber(sale[2] or '0')
local front, next, roundEnd = tonumber(line[1]), tonumber(line[2]), tonumber(line[3])
local givenUp = tonumber(line[6])
local now = redisMillis()
if now >= roundEnd then
    if remaining == tonumber(line[5]) then
        -- A whole round without a unit taken or given back: the places ahead have had their turn.
        local spare = remaining - math.max(0, front - tonumber(line[4]))
        if spare > 0 then
            front = front + spare
            givenUp = givenUp + spare
        end
    end
    roundEnd = now + tonumber(ARGV[1])
    redis.call('HSET', KEYS[1], 'front', front, 'roundEnd', roundEnd, 'mark', next, 'markRemaining', remaining,
        'givenUp', givenUp)
end
return {front, next, roundEnd, remaining, held, givenUp, tonumber(sale[3] or '-1')}
