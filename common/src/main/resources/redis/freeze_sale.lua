-- Freezes a sale while its state is rebuilt from Postgres: the reserve script answers REBUILDING until
-- frozenUntil (Redis's own clock plus the lease), so no reservation is taken between the rebuild's reads
-- and its write. A rebuild that dies leaves a freeze that simply runs out. The freeze carries its
-- rebuild's token: the rebuild writes only while its own freeze is in place (rebuild_sale.lua).
-- KEYS[1] sale hash
-- ARGV: leaseMillis, token
local now = redisMillis()
redis.call('HSET', KEYS[1], 'frozenUntil', now + tonumber(ARGV[1]), 'frozenBy', ARGV[2])
return now
