-- Freezes a sale while its state is rebuilt from Postgres: the reserve script answers REBUILDING until
-- frozenUntil (Redis's own clock plus the lease), so no reservation is taken between the rebuild's reads
-- and its write. A rebuild that dies leaves a freeze that simply runs out. The freeze carries its
-- rebuild's token: the rebuild writes only while its own freeze is in place (rebuild_sale.lua).
-- KEYS[1] sale hash
-- ARGV: leaseMillis, token
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], 'frozenUntil', now + tonumber(ARGV[1]), 'frozenBy', ARGV[2])
return now
