-- What several scripts share. LuaScripts.load puts it before every script it loads: a script cannot call
-- another.

-- Redis's own clock, in ms: the one clock the pending set's scores, a rebuild's freeze and a line's rounds
-- are compared on, whichever host asks.
local function redisMillis()
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- A reservation's record: one field of its sale's hash of records ({sale:ID}:orders), by order id, holding
-- 'state:mode:code:quantity:createdMillis:user' (the user last, so that it may hold any character). A record
-- that a request holds (reserve.lua) dates itself 'createdMillis@instance': the API instance whose lease
-- (instance_lease.lua) the reconciler reads to settle it at once when that instance died. A record without
-- one (a rebuild's, or one written before instances had leases) waits out the grace.
local Record = {}

-- instance: '' or nil when no API instance holds it
function Record.of(state, mode, code, quantity, created, user, instance)
    if instance and instance ~= '' then
        created = created .. '@' .. instance
    end
    return string.format('%s:%s:%s:%d:%s:%s', state, mode, code, quantity, created, user)
end

-- state, mode, code, quantity (a number), createdMillis, user, instance ('' when none)
function Record.parts(record)
    local state, mode, code, quantity, created, instance, user =
        string.match(record, '^([^:]*):([^:]*):([^:]*):(%d+):(%d*)@?(%w*):(.*)$')
    return state, mode, code, tonumber(quantity), created, user, instance
end

-- A shopper's attempt, admitted or not (throttle.lua in a call of its own; reserve.lua for each order of a
-- batch that asks it, on one Redis master): a fixed-window counter for the shopper, which the first attempt
-- of a window starts (and its TTL), every attempt counts. An admitted attempt that carries an
-- Idempotency-Key binds it (SET NX). Returns 0 and nil when admitted and bound now (or no key is given); 0
-- and the value the key was bound to before; or the milliseconds until the window ends when the window is
-- spent (nothing is bound then).
local Admission = {}

function Admission.admit(counter, windowMillis, limit, binding, value, bindingTtlMillis)
    local count = 1
    if not redis.call('SET', counter, 1, 'NX', 'PX', windowMillis) then
        count = redis.call('INCR', counter)
        if count == 1 then
            redis.call('PEXPIRE', counter, windowMillis)
        end
    end
    if count > tonumber(limit) then
        local ttl = redis.call('PTTL', counter)
        if ttl < 0 then
            redis.call('PEXPIRE', counter, windowMillis)
            ttl = tonumber(windowMillis)
        end
        return ttl, nil
    end
    if not binding or redis.call('SET', binding, value, 'NX', 'PX', bindingTtlMillis) then
        return 0, nil
    end
    return 0, redis.call('GET', binding)
end
