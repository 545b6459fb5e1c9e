-- Moves reservations of one sale along their life (RESERVED -> PUBLISHED -> CLAIMED -> CONFIRMED, or
-- RESERVED -> WRITING -> CONFIRMED) without touching stock; reaching CONFIRMED ends the hold and takes the
-- order out of the pending set, where it stays while it holds, scored by when it was reserved or, once a
-- worker claimed it, by its latest claim (Redis's TIME): the reconciler ages a CLAIMED record from the
-- delivery a worker took, not from a backlog it waited in. Each record moves only from one of the expected
-- states, so the script is idempotent. One call serves a whole batch of orders of the sale (group commit),
-- in a few commands whatever its size: the records read in one HMGET and written in one HSET.
-- KEYS[1] sale hash  KEYS[2] pending set  KEYS[3] the sale's order records (shared.lua has their format)
-- ARGV: fromStates (comma separated), toState, then what the move does besides: 'ends' (the hold: a final
-- state), 'dates' (the moved records dated anew in the pending set: a worker's claim, or the reconciler's
-- publication of an order its API left RESERVED) or 'keeps'; then the order ids
-- Returns, per order in ARGV order: 'CHANGED:previousState' | 'UNCHANGED:currentState' | 'MISSING'
local from = ',' .. ARGV[1] .. ','
local to = ARGV[2]
local endsHold = ARGV[3] == 'ends'
local dates = ARGV[3] == 'dates'
local claims = to == 'CLAIMED'
local now
if dates then
    now = redisMillis()
end
-- Calls run(at, ...) with the values from position at on, 1,000 at a time (an even number: pairs stay whole):
-- unpack is bounded by Lua's C stack (8,000 values).
local function inSlices(values, run)
    for at = 1, #values, 1000 do
        run(at, unpack(values, at, math.min(at + 999, #values)))
    end
end
local ids = {}
for i = 4, #ARGV do
    ids[#ids + 1] = ARGV[i]
end
local records = {}
inSlices(ids, function(at, ...)
    local read = redis.call('HMGET', KEYS[3], ...)
    for j = 1, #read do
        records[at + j - 1] = read[j]
    end
end)
local results = {}
-- The held units given back, the records written and the orders leaving or claimed in the pending set,
-- written once for the whole call. A record an earlier order of the call moved is read as moved.
local heldBack = 0
local written = {}
local changed = {}
local leaving = {}
local dated = {}
for i, orderId in ipairs(ids) do
    local record = changed[orderId] or records[i]
    if not record then
        results[i] = 'MISSING'
    else
        local state, mode, code, quantity, created, user, instance = Record.parts(record)
        if state == to or not string.find(from, ',' .. state .. ',', 1, true) then
            if dates and claims and state == 'CLAIMED' then
                dated[#dated + 1] = now -- a redelivery claims it again
                dated[#dated + 1] = orderId
            end
            results[i] = 'UNCHANGED:' .. state
        else
            if endsHold then
                heldBack = heldBack + quantity
                leaving[#leaving + 1] = orderId
            end
            changed[orderId] = Record.of(to, mode, code, quantity, created, user, instance)
            written[#written + 1] = orderId
            written[#written + 1] = changed[orderId]
            if dates then
                dated[#dated + 1] = now
                dated[#dated + 1] = orderId
            end
            results[i] = 'CHANGED:' .. state
        end
    end
end
inSlices(written, function(_, ...) redis.call('HSET', KEYS[3], ...) end)
inSlices(dated, function(_, ...) redis.call('ZADD', KEYS[2], 'XX', ...) end)
-- One command where the sale's hash is there (it always has 'held'); where it is gone (lost, or a throw-away
-- sale deleted), HINCRBY made one of a lone field below zero, which must not stay: the sale is missing.
if heldBack > 0 and redis.call('HINCRBY', KEYS[1], 'held', -heldBack) < 0 and redis.call('HLEN', KEYS[1]) == 1 then
    redis.call('DEL', KEYS[1])
end
inSlices(leaving, function(_, ...) redis.call('ZREM', KEYS[2], ...) end)
return results
