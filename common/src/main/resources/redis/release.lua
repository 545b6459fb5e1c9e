-- Gives a reservation's units back to the sale and to the user's allowance, exactly once: only from one
-- of the expected states, and the record moves to a final state so that a second call changes nothing.
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] the sale's order records (shared.lua has their
-- format)  KEYS[4] pending set
-- ARGV: orderId, fromStates (comma separated), toState, code
-- Returns {'CHANGED', previousState} | {'UNCHANGED', currentState} | {'MISSING'}
local record = redis.call('HGET', KEYS[3], ARGV[1])
if not record then
    -- An expired record leaves nothing to give back; it must not stay listed as pending either.
    redis.call('ZREM', KEYS[4], ARGV[1])
    return {'MISSING'}
end
local state, mode, _, quantity, created, user = Record.parts(record)
if not string.find(',' .. ARGV[2] .. ',', ',' .. state .. ',', 1, true) then
    return {'UNCHANGED', state}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'remaining', quantity)
    redis.call('HINCRBY', KEYS[1], 'held', -quantity)
end
-- The shopper stays in the per-user totals at 0: the API's memory of a sold-out sale reads who ever held
-- units there (their replays must reach Redis), and their count is its version (StockReadings).
if redis.call('HINCRBY', KEYS[2], user, -quantity) < 0 then
    redis.call('HSET', KEYS[2], user, 0)
end
redis.call('HSET', KEYS[3], ARGV[1], Record.of(ARGV[3], mode, ARGV[4], quantity, created, user))
redis.call('ZREM', KEYS[4], ARGV[1])
return {'CHANGED', state}
