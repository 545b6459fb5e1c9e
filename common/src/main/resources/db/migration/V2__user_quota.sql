-- The per-user limit's backstop in Postgres: units each user holds in each sale, moved in the same
-- transaction as the order insert by a guarded upsert (units + quantity <= the sale's per_user_limit).
-- Redis decides the limit during a sale; this refuses what a lost or stale Redis would let through.

create table sale_user_quota (
    sale_id bigint       not null references sale (id),
    user_id varchar(128) not null,
    units   integer      not null check (units >= 0),
    primary key (sale_id, user_id)
);

insert into sale_user_quota (sale_id, user_id, units)
select sale_id, user_id, sum(quantity)
from purchase_order
where status = 'CONFIRMED'
group by sale_id, user_id;
