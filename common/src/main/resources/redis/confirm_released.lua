-- Takes a released reservation's units again, once Postgres confirmed its order after all (a SYNC write
-- that stalled past the reconciler's grace, was released as abandoned, then committed): Redis follows
-- Postgres, the truth for a written order. Only from RELEASED, so a second call changes nothing.
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] the sale's order records (shared.lua has their
-- format)  KEYS[4] pending set (not held any more)
-- ARGV: orderId
-- Returns {'CHANGED', 'RELEASED'} | {'UNCHANGED', currentState} | {'MISSING'}
local record = redis.call('HGET', KEYS[3], ARGV[1])
if not record then
    return {'MISSING'}
end
local state, mode, _, quantity, created, user = Record.parts(record)
if state ~= 'RELEASED' then
    return {'UNCHANGED', state}
end
-- Units resold meanwhile may take remaining below zero: those orders are refused by Postgres, and their
-- release brings it back, so the count stays exact.
if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'remaining', -quantity)
end
redis.call('HINCRBY', KEYS[2], user, quantity)
redis.call('HSET', KEYS[3], ARGV[1], Record.of('CONFIRMED', mode, '', quantity, created, user))
return {'CHANGED', 'RELEASED'}
