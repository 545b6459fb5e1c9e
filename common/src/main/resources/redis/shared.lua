-- What several scripts share. LuaScripts.load puts it before every script it loads: a script cannot call
-- another.

-- Redis's own clock, in ms: the one clock the pending set's scores, a rebuild's freeze and a line's rounds
-- are compared on, whichever host asks.
local function redisMillis()
    local time = redis.call('TIME')
    return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end

-- A reservation's record: one field of its sale's hash of records ({sale:ID}:orders), by order id, holding
-- 'state:mode:code:quantity:createdMillis:user' (the user last, so that it may hold any character).
local Record = {}

function Record.of(state, mode, code, quantity, created, user)
    return string.format('%s:%s:%s:%d:%s:%s', state, mode, code, quantity, created, user)
end

-- state, mode, code, quantity (a number), createdMillis, user
function Record.parts(record)
    local state, mode, code, quantity, created, user =
        string.match(record, '^([^:]*):([^:]*):([^:]*):(%d+):([^:]*):(.*)$')
    return state, mode, code, tonumber(quantity), created, user
end
