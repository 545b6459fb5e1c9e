-- When a sale last sold a unit in Postgres (the guarded stock update sets it): after a Redis restart
-- that lost its state, the sales that were selling are rebuilt at once, the quiet ones on first use.
alter table sale_stock add column last_sold_at timestamptz;
