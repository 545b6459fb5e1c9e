-- Moves reservations of one sale along their life (RESERVED -> PUBLISHED -> CLAIMED -> CONFIRMED, or
-- RESERVED -> WRITING -> CONFIRMED) without touching stock; reaching CONFIRMED ends the hold and takes the
-- order out of the pending set, where it stays while it holds, scored by when it was reserved or, once a
-- worker claimed it, by its latest claim (Redis's TIME): the reconciler ages a CLAIMED record from the
-- delivery a worker took, not from a backlog it waited in. Each record moves only from one of the expected
-- states, so the script is idempotent. One call serves a whole batch of orders of the sale (group commit).
-- KEYS[1] sale hash  KEYS[2] pending set  KEYS[3..] order records
-- ARGV: fromStates (comma separated), toState, endsHold (1|0), then one order id per record
-- Returns, per order in KEYS order: 'CHANGED:previousState' | 'UNCHANGED:currentState' | 'MISSING'
local from = ',' .. ARGV[1] .. ','
local endsHold = ARGV[3] == '1'
local saleExists = endsHold and redis.call('EXISTS', KEYS[1]) == 1
local claims = ARGV[2] == 'CLAIMED'
local now
if claims then
    local time = redis.call('TIME')
    now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
local results = {}
-- The held units given back and the orders leaving the pending set, written once for the whole call.
local heldBack = 0
local leaving = {}
for i = 3, #KEYS do
    local orderId = ARGV[i + 1]
    local record = redis.call('HMGET', KEYS[i], 'state', 'qty')
    local state = record[1]
    if not state then
        results[#results + 1] = 'MISSING'
    elseif state == ARGV[2] or not string.find(from, ',' .. state .. ',', 1, true) then
        if claims and state == 'CLAIMED' then
            redis.call('ZADD', KEYS[2], 'XX', now, orderId) -- a redelivery claims it again
        end
        results[#results + 1] = 'UNCHANGED:' .. state
    else
        if endsHold then
            heldBack = heldBack + tonumber(record[2])
            leaving[#leaving + 1] = orderId
        end
        redis.call('HSET', KEYS[i], 'state', ARGV[2])
        if claims then
            redis.call('ZADD', KEYS[2], 'XX', now, orderId)
        end
        results[#results + 1] = 'CHANGED:' .. state
    end
end
if saleExists and heldBack > 0 then
    redis.call('HINCRBY', KEYS[1], 'held', -heldBack)
end
-- In slices: unpack is bounded by Lua's C stack (8,000 values).
for at = 1, #leaving, 1000 do
    redis.call('ZREM', KEYS[2], unpack(leaving, at, math.min(at + 999, #leaving)))
end
return results
