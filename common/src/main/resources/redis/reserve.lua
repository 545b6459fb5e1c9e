-- Reserves stock for one order, atomically: the sale is open, the user stays within the limit,
-- the stock suffices. Idempotent by order id: a replay (Idempotency-Key, or a command re-sent after a
-- reconnect) finds the order's record and changes nothing.
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] order record  KEYS[4] pending set
-- ARGV: orderId, userId, quantity, nowMillis, mode, rememberRefusal (1|0), recordTtlSeconds, refusalTtlSeconds
-- nowMillis (the API's clock) checks the sale window and dates the order; the pending set is scored with
-- Redis's own TIME, the one clock the reconciler compares it with.
-- Returns {'RESERVED', remaining, held} | {'REFUSED', code, held} | {'EXISTS', state, mode, code}
--   | {'UNAVAILABLE', 'MISSING' | 'REBUILDING'} | {'HELD_BY_OTHERS'}
-- held: the units the user held in the sale before this order. A purchase with a fresh Idempotency-Key
-- whose user holds units may be a replay whose binding Redis lost: the API then asks Postgres.
-- SOLD_OUT is final to a shopper: it is answered only when the units still held by reservations could not
-- make up the quantity if they all came back. Until then the answer is HELD_BY_OTHERS: not now, nothing
-- remembered.
local existing = redis.call('HMGET', KEYS[3], 'state', 'mode', 'code')
if existing[1] then
    return {'EXISTS', existing[1], existing[2], existing[3] or ''}
end

local total = redis.call('HGET', KEYS[2], ARGV[2])
local bought = tonumber(total or '0')

local function refuse(code)
    if ARGV[6] == '1' then
        redis.call('HSET', KEYS[3], 'state', 'REFUSED', 'code', code, 'qty', ARGV[3], 'user', ARGV[2],
            'mode', ARGV[5], 'created', ARGV[4])
        redis.call('EXPIRE', KEYS[3], ARGV[8])
    end
    return {'REFUSED', code, tostring(bought)}
end

local sale = redis.call('HMGET', KEYS[1], 'remaining', 'limit', 'startsAt', 'endsAt', 'frozenUntil', 'held')
local now = tonumber(ARGV[4])
-- Redis's own clock, in ms: the rebuild's freeze and the pending set's score are both on it.
local time = redis.call('TIME')
local redisNow = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- The sale's state is missing (Redis lost it) or being rebuilt from Postgres: neither is a refusal to
-- remember, the sale comes back.
if sale[5] and redisNow < tonumber(sale[5]) then
    return {'UNAVAILABLE', 'REBUILDING'}
end
if not sale[1] then
    return {'UNAVAILABLE', 'MISSING'}
end
if now < tonumber(sale[3]) or now >= tonumber(sale[4]) then
    return refuse('SALE_NOT_ACTIVE')
end
local quantity = tonumber(ARGV[3])
local remaining = tonumber(sale[1])
if remaining < quantity then
    if remaining + tonumber(sale[6] or '0') >= quantity then
        return {'HELD_BY_OTHERS'}
    end
    return refuse('SOLD_OUT')
end
if bought + quantity > tonumber(sale[2]) then
    return refuse('PURCHASE_LIMIT_REACHED')
end
if not total then
    -- A new shopper in the per-user totals: 'buyers' counts them (nothing removes one), so an instance
    -- that believes the sale sold out reads one field to see whether its list of shoppers went stale.
    redis.call('HINCRBY', KEYS[1], 'buyers', 1)
end

redis.call('HINCRBY', KEYS[1], 'remaining', -quantity)
redis.call('HINCRBY', KEYS[1], 'held', quantity)
redis.call('HINCRBY', KEYS[2], ARGV[2], quantity)
redis.call('HSET', KEYS[3], 'state', 'RESERVED', 'qty', quantity, 'user', ARGV[2], 'mode', ARGV[5],
    'created', ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[7])
redis.call('ZADD', KEYS[4], redisNow, ARGV[1])
return {'RESERVED', tostring(remaining - quantity), tostring(bought)}
