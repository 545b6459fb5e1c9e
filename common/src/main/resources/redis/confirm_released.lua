-- Takes a released reservation's units again, once Postgres confirmed its order after all (a SYNC write
-- that stalled past the reconciler's grace, was released as abandoned, then committed): Redis follows
-- Postgres, the truth for a written order. Only from RELEASED, so a second call changes nothing.
-- KEYS[1] sale hash  KEYS[2] per-user totals  KEYS[3] order record  KEYS[4] pending set (not held any more)
-- Returns {'CHANGED', 'RELEASED'} | {'UNCHANGED', currentState} | {'MISSING'}
local record = redis.call('HMGET', KEYS[3], 'state', 'qty', 'user')
if not record[1] then
    return {'MISSING'}
end
if record[1] ~= 'RELEASED' then
    return {'UNCHANGED', record[1]}
end
local quantity = tonumber(record[2])
-- Units resold meanwhile may take remaining below zero: those orders are refused by Postgres, and their
-- release brings it back, so the count stays exact.
if redis.call('EXISTS', KEYS[1]) == 1 then
    redis.call('HINCRBY', KEYS[1], 'remaining', -quantity)
end
redis.call('HINCRBY', KEYS[2], record[3], quantity)
redis.call('HSET', KEYS[3], 'state', 'CONFIRMED', 'code', '')
return {'CHANGED', 'RELEASED'}
