-- Moves a reservation along its life (RESERVED -> PUBLISHED -> CLAIMED -> CONFIRMED) without touching
-- stock; reaching CONFIRMED ends the hold. Only from one of the expected states, so it is idempotent.
-- KEYS[1] sale hash  KEYS[2] order record  KEYS[3] pending set
-- ARGV: orderId, fromStates (comma separated), toState, endsHold (1|0)
-- Returns {'CHANGED', previousState} | {'UNCHANGED', currentState} | {'MISSING'}
local state = redis.call('HGET', KEYS[2], 'state')
if not state then
    return {'MISSING'}
end
if state == ARGV[3] or not string.find(',' .. ARGV[2] .. ',', ',' .. state .. ',', 1, true) then
    return {'UNCHANGED', state}
end
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'held', -tonumber(redis.call('HGET', KEYS[2], 'qty')))
end
redis.call('HSET', KEYS[2], 'state', ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[1])
return {'CHANGED', state}
