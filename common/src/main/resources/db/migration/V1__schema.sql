-- Sales, their stock, the orders taken against them, and the audit of purchase-mode changes.

create table sale (
    id             bigint generated always as identity primary key,
    sku            varchar(64)  not null unique,
    name           varchar(200) not null,
    price_cents    bigint       not null check (price_cents >= 0),
    total_stock    integer      not null check (total_stock >= 0),
    per_user_limit integer      not null check (per_user_limit >= 1),
    starts_at      timestamptz  not null,
    ends_at        timestamptz  not null,
    created_at     timestamptz  not null default now(),
    check (ends_at > starts_at)
);

-- Stock lives in slots so that a hot sale can be split across several rows later;
-- every decrement is a guarded UPDATE (remaining >= quantity), so a slot can never go negative.
create table sale_stock (
    sale_id   bigint   not null references sale (id),
    slot      smallint not null check (slot >= 0),
    remaining integer  not null check (remaining >= 0),
    primary key (sale_id, slot)
);

create table purchase_order (
    id                  uuid         primary key, -- UUIDv7, chosen by the API before anything is reserved
    sale_id             bigint       not null references sale (id),
    user_id             varchar(128) not null,
    quantity            integer      not null check (quantity >= 1),
    status              varchar(16)  not null check (status in ('QUEUED', 'CONFIRMED', 'REJECTED', 'FAILED')),
    mode                varchar(8)   not null check (mode in ('SYNC', 'ASYNC')),
    idempotency_key     varchar(128),
    request_fingerprint varchar(64),
    failure_code        varchar(64),
    created_at          timestamptz  not null,
    updated_at          timestamptz  not null default now(),
    check ((idempotency_key is null) = (request_fingerprint is null))
);

-- One order per (user, Idempotency-Key): a replayed request can never become a second order.
create unique index purchase_order_idempotency on purchase_order (user_id, idempotency_key)
    where idempotency_key is not null;
create index purchase_order_sale_status on purchase_order (sale_id, status);

create table mode_change (
    id         bigint generated always as identity primary key,
    changed_at timestamptz  not null default now(),
    changed_by varchar(128) not null,
    from_mode  varchar(8)   not null,
    to_mode    varchar(8)   not null,
    reason     varchar(500)
);
