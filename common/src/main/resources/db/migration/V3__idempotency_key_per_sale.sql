-- An Idempotency-Key names one purchase of one sale (issue 27, path 4). In Redis it is bound to that
-- purchase (sale and quantity) for app.purchase.idempotency-ttl (24 h): a replay gets the original order,
-- the key for another sale or quantity 422. Once the binding expired, the key is free for another sale;
-- unique per (user, key) with no scope, Postgres refused such an order for good (ASYNC: 202, then
-- REJECTED; SYNC: 422). Within one sale a key still names one order, however late its replay.
-- The swap takes purchase_order's exclusive lock: fail fast rather than queue every order behind a
-- transaction left open (the migration step is retried), and keep the swap itself short.
set local lock_timeout = '5s';
drop index purchase_order_idempotency;
create unique index purchase_order_idempotency on purchase_order (user_id, sale_id, idempotency_key)
    where idempotency_key is not null;
