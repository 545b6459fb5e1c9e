-- A shopper's attempt counted in a call of its own (shared.lua's Admission): an attempt whose reserve call
-- cannot count it, because its keys live on another slot than its sale's (Redis Cluster), or because its
-- sale must be looked up first. Atomic, so the counter can never exist without its TTL. Both keys carry the
-- shopper's hash tag, so the script runs unchanged on Redis Cluster.
-- KEYS[1] the shopper's counter; KEYS[2] (optional) the Idempotency-Key's binding
-- ARGV: windowMillis, limit; with KEYS[2]: the binding's value, its TTL in milliseconds
-- Returns {wait, stored}: wait is 0 when the attempt is admitted, else the milliseconds until the window
-- ends (nothing is bound then); stored is false when the key was bound now (or none was given), else the
-- value it was bound to before
local wait, stored = Admission.admit(KEYS[1], ARGV[1], ARGV[2], KEYS[2], ARGV[3], ARGV[4])
return {wait, stored or false}
