-- Reserves stock for a batch of orders of one sale, atomically, each order in turn in the order given (the
-- order of arrival): the sale is open, the user stays within the limit, the stock suffices. Each order is
-- decided exactly as if it ran alone after the ones before it: an earlier order of the batch counts
-- against the stock and its user's limit, and an order id given twice finds the first one's record.
-- Idempotent by order id: a replay (Idempotency-Key, or a command re-sent after a reconnect) finds the
-- order's record and changes nothing. One order is a batch of one.
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] pending set  KEYS[4] the sale's order records
-- KEYS[5] the sale's remembered refusals
-- ARGV[1] recordTtlSeconds  ARGV[2] refusalTtlSeconds  ARGV[3] the API instance reserving (its records carry
-- it: shared.lua), then thirteen per order:
--   orderId, userId, quantity, nowMillis, mode, rememberRefusal (1|0), state,
--   counterAt, windowMillis, limit, bindingAt, binding, bindingTtlMillis
-- counterAt > 0: the call counts the order's attempt against its shopper's window (KEYS[counterAt]) and, with
-- bindingAt > 0, binds its Idempotency-Key (KEYS[bindingAt]) to binding, before deciding it (shared.lua's
-- Admission): the request made no call of its own for them. Those keys are on the shopper's slot, so only on
-- one Redis master (Redis Cluster counts in a call of its own: throttle.lua). 0: counted before.
-- A record (shared.lua has its format) is a field of KEYS[4] by order id, a remembered refusal one of KEYS[5].
-- The refusals' hash lives as long as its newest refusal: each write renews its TTL. The records' hash lives at
-- least recordTtl after its newest record: its TTL is set to 1.1 x recordTtl, renewed by the first call that
-- reserves once a tenth of it has passed (the sale's 'recordsRenewedAt', on Redis's clock), not by every call.
-- state: what a reservation is recorded as, RESERVED, or WRITING for a SYNC order reserved by the batch that
-- writes it to Postgres next (no second call moves it there).
-- nowMillis (the API's clock) checks the sale window and dates the order; the pending set is scored with
-- Redis's own TIME, the one clock the reconciler compares it with.
-- Returns four slots per order, in the orders' order:
--   'RESERVED', remaining, held, '' | 'REFUSED', code, held, '' | 'EXISTS', state, mode, code
--   | 'UNAVAILABLE', 'MISSING' | 'REBUILDING', '', '' | 'HELD_BY_OTHERS', '', '', ''
--   | 'THROTTLED', the ms until the shopper's window ends, '', '' | 'BOUND', the key's binding, '', ''
-- (THROTTLED and BOUND only for an order the call admits: nothing reserved, nothing bound now)
-- held: the units the user held in the sale before this order. A purchase with a fresh Idempotency-Key
-- whose user holds units may be a replay whose binding Redis lost: the API then asks Postgres.
-- SOLD_OUT is final to a shopper: it is answered only when the units still held by reservations could not
-- make up the quantity if they all came back. Until then the answer is HELD_BY_OTHERS: not now, nothing
-- remembered.
-- Commands: a call costs the same few whatever its size: the sale, TIME, the users' totals and the orders'
-- records (and remembered refusals, when an order asks for one) are read once each, and the sale's counters,
-- the totals, the records and the pending set written once each (the records' TTL now and then). An order
-- the call admits adds its counter's one command (two in a window's later attempts) and its key's one.
local sale = redis.call('HMGET', KEYS[1], 'remaining', 'limit', 'startsAt', 'endsAt', 'frozenUntil', 'held',
    'buyers', 'recordsRenewedAt')
-- Redis's own clock, in ms: the rebuild's freeze and the pending set's score are both on it.
local redisNow = redisMillis()
-- The sale's state is missing (Redis lost it) or being rebuilt from Postgres: neither is a refusal to
-- remember, the sale comes back.
local unavailable
if sale[5] and redisNow < tonumber(sale[5]) then
    unavailable = 'REBUILDING'
elseif not sale[1] then
    unavailable = 'MISSING'
end
local remaining = tonumber(sale[1] or '0')
local limit = tonumber(sale[2] or '0')
local startsAt = tonumber(sale[3] or '0')
local endsAt = tonumber(sale[4] or '0')
local held = tonumber(sale[6] or '0')
local PER_ORDER = 13
local count = #ARGV > 3 and (#ARGV - 3) / PER_ORDER or 0

local function arg(i, field)
    return ARGV[3 + (i - 1) * PER_ORDER + field]
end

-- The batch's view of the per-user totals and of its orders' records: each read in one HMGET, written once
-- at the end.
local totals = {}
local listed = {}
local records = {}
local refusals = {}
do
    local users = {}
    local ids = {}
    local remembering = {}
    for i = 1, count do
        local user = arg(i, 2)
        if listed[user] == nil then
            listed[user] = false
            users[#users + 1] = user
        end
        ids[i] = arg(i, 1)
        if arg(i, 6) == '1' then
            remembering[#remembering + 1] = ids[i]
        end
    end
    if #users > 0 then
        local read = redis.call('HMGET', KEYS[2], unpack(users))
        for j, user in ipairs(users) do
            totals[user] = tonumber(read[j] or '0')
            listed[user] = read[j] ~= false
        end
    end
    if count > 0 then
        local read = redis.call('HMGET', KEYS[4], unpack(ids))
        for i = 1, count do
            if read[i] then
                records[ids[i]] = read[i]
            end
        end
    end
    if #remembering > 0 then
        local read = redis.call('HMGET', KEYS[5], unpack(remembering))
        for j, id in ipairs(remembering) do
            if read[j] and not records[id] then
                records[id] = read[j]
            end
        end
    end
end

local moved = {}
local isMoved = {}
local newBuyers = 0
local reserved = {}
local refused = {}
local pending = {}

local function reserveOne(orderId, user, quantity, now, mode, remember, state)
    local existing = records[orderId]
    if existing then
        local was, wasMode, code = Record.parts(existing)
        return 'EXISTS', was, wasMode, code
    end
    if unavailable then
        return 'UNAVAILABLE', unavailable, '', ''
    end
    local bought = totals[user]
    local function refuse(code)
        if remember then
            local record = Record.of('REFUSED', mode, code, quantity, now, user)
            records[orderId] = record
            refused[#refused + 1] = orderId
            refused[#refused + 1] = record
        end
        return 'REFUSED', code, tostring(bought), ''
    end
    if tonumber(now) < startsAt or tonumber(now) >= endsAt then
        return refuse('SALE_NOT_ACTIVE')
    end
    if remaining < quantity then
        if remaining + held >= quantity then
            return 'HELD_BY_OTHERS', '', '', ''
        end
        return refuse('SOLD_OUT')
    end
    if bought + quantity > limit then
        return refuse('PURCHASE_LIMIT_REACHED')
    end
    if not listed[user] then
        -- A new shopper in the per-user totals: 'buyers' counts them (nothing removes one), so an instance
        -- that believes the sale sold out reads one field to see whether its list of shoppers went stale.
        newBuyers = newBuyers + 1
        listed[user] = true
    end
    if not isMoved[user] then
        moved[#moved + 1] = user
        isMoved[user] = true
    end
    remaining = remaining - quantity
    held = held + quantity
    totals[user] = bought + quantity
    local record = Record.of(state, mode, '', quantity, now, user, ARGV[3])
    records[orderId] = record
    reserved[#reserved + 1] = orderId
    reserved[#reserved + 1] = record
    pending[#pending + 1] = redisNow
    pending[#pending + 1] = orderId
    return 'RESERVED', tostring(remaining), tostring(bought), ''
end

-- An order the call admits: nil once admitted (and its key bound now), else its answer.
local function refusedAdmission(i)
    local counterAt = tonumber(arg(i, 8))
    if counterAt == 0 then
        return nil
    end
    local bindingAt = tonumber(arg(i, 11))
    local wait, stored = Admission.admit(KEYS[counterAt], arg(i, 9), arg(i, 10),
        bindingAt > 0 and KEYS[bindingAt] or nil, arg(i, 12), arg(i, 13))
    if wait > 0 then
        return 'THROTTLED', tostring(wait), '', ''
    end
    if stored then
        return 'BOUND', stored, '', ''
    end
    return nil
end

local results = {}
for i = 1, count do
    local kind, a, b, c = refusedAdmission(i)
    if not kind then
        kind, a, b, c = reserveOne(arg(i, 1), arg(i, 2), tonumber(arg(i, 3)), arg(i, 4), arg(i, 5),
            arg(i, 6) == '1', arg(i, 7))
    end
    results[#results + 1] = kind
    results[#results + 1] = a
    results[#results + 1] = b
    results[#results + 1] = c
end

if #refused > 0 then
    redis.call('HSET', KEYS[5], unpack(refused))
    redis.call('EXPIRE', KEYS[5], ARGV[2])
end
if #pending > 0 then
    -- Written as whole numbers: a Lua number's own text turns large ones into exponents.
    local counters = {'remaining', string.format('%d', remaining), 'held', string.format('%d', held)}
    if newBuyers > 0 then
        counters[#counters + 1] = 'buyers'
        counters[#counters + 1] = string.format('%d', tonumber(sale[7] or '0') + newBuyers)
    end
    local ttl = tonumber(ARGV[1])
    local renew = redisNow - tonumber(sale[8] or '0') >= ttl * 100
    if renew then
        counters[#counters + 1] = 'recordsRenewedAt'
        counters[#counters + 1] = string.format('%d', redisNow)
    end
    redis.call('HSET', KEYS[1], unpack(counters))
    local users = {}
    for _, user in ipairs(moved) do
        users[#users + 1] = user
        users[#users + 1] = string.format('%d', totals[user])
    end
    redis.call('HSET', KEYS[2], unpack(users))
    redis.call('HSET', KEYS[4], unpack(reserved))
    if renew then
        redis.call('EXPIRE', KEYS[4], ttl + math.ceil(ttl / 10))
    end
    redis.call('ZADD', KEYS[3], unpack(pending))
end
return results
