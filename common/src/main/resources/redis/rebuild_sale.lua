-- Rebuilds one sale's state from Postgres's truth, atomically: remaining = stock - confirmed - held,
-- where held is what the pending reservations Redis still has a record of (orders not yet in
-- Postgres) hold; per-user totals = confirmed units in Postgres + those holds; every order Postgres has
-- gets a record in its final state (so a replay of its Idempotency-Key finds it). Run under the sale's
-- freeze and the Postgres lock of its stock rows, so neither store moves meanwhile; writes nothing when that
-- freeze ran out or is another rebuild's (reservations taken since are missing from the records listed).
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] pending set  KEYS[4] the sale's order records
-- (shared.lua has their format)
-- ARGV: stock, limit, startsAtMillis, endsAtMillis, freezeMillis, recordTtlSeconds, confirmedUnits,
--       storedCount, userCount, freezeToken, then userCount pairs (user, confirmed units),
--       then per stored order: orderId, state, qty, user, mode, createdMillis, code,
--       then the ids of the other records found in Redis (orders Postgres does not hold)
-- Returns {remaining, held} | {'LAPSED'}
local now = redisMillis()
local freeze = redis.call('HMGET', KEYS[1], 'frozenUntil', 'frozenBy')
if freeze[2] ~= ARGV[10] or not freeze[1] or now >= tonumber(freeze[1]) then
    return {'LAPSED'}
end
local pending = {RESERVED = true, WRITING = true, PUBLISHED = true, CLAIMED = true}
local stored = tonumber(ARGV[8])
local users = tonumber(ARGV[9])
redis.call('DEL', KEYS[2])
local a = 11
for _ = 1, users do
    redis.call('HSET', KEYS[2], ARGV[a], ARGV[a + 1])
    a = a + 2
end
for _ = 1, stored do
    local id = ARGV[a]
    local record = redis.call('HGET', KEYS[4], id)
    local state = record and Record.parts(record)
    if not record or state ~= ARGV[a + 1] then
        -- A record in another state keeps when it was made and by whom; its state and code are Postgres's.
        redis.call('HSET', KEYS[4], id, Record.of(ARGV[a + 1], ARGV[a + 4], ARGV[a + 6], tonumber(ARGV[a + 2]),
            ARGV[a + 5], ARGV[a + 3]))
        if record then
            redis.call('ZREM', KEYS[3], id)
        end
    end
    a = a + 7
end
local held = 0
for i = a, #ARGV do
    local record = redis.call('HGET', KEYS[4], ARGV[i])
    if record then
        local state, _, _, quantity, _, user = Record.parts(record)
        if pending[state] then
            held = held + quantity
            redis.call('HINCRBY', KEYS[2], user, quantity)
        end
    end
end
redis.call('EXPIRE', KEYS[4], ARGV[6])
local remaining = tonumber(ARGV[1]) - tonumber(ARGV[7]) - held
if remaining < 0 then
    remaining = 0
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'initial', ARGV[1], 'remaining', remaining, 'held', held, 'limit', ARGV[2],
    'startsAt', ARGV[3], 'endsAt', ARGV[4], 'frozenUntil', now + tonumber(ARGV[5]), 'rebuiltAt', now,
    'buyers', redis.call('HLEN', KEYS[2]))
return {tostring(remaining), tostring(held)}
