-- Evidence tables read by the worker (contract §8). Other writers may insert the five contract
-- columns alone: every column added here must be nullable or have a default.
-- {{observations_table}} / {{events_table}} are replaced by validated, quoted identifiers from
-- settings; every statement is idempotent so `grounding-worker migrate` can always be re-run.

CREATE TABLE IF NOT EXISTS {{observations_table}} (
    id          bigint      PRIMARY KEY,
    tenant_id   text        NOT NULL,
    acl         text[]      NULL,          -- NULL: whole tenant; '{}': nobody
    revoked_at  timestamptz NULL,          -- revoked once set and not in the future
    summary     text        NULL           -- what a quote is checked against
);

-- The worker's one query per batch: WHERE tenant_id = $1 AND id = ANY($2).
CREATE INDEX IF NOT EXISTS {{observations_table_tenant_idx}}
    ON {{observations_table}} (tenant_id, id);

CREATE TABLE IF NOT EXISTS {{events_table}} (
    id          bigint      PRIMARY KEY,
    tenant_id   text        NOT NULL,
    acl         text[]      NULL,
    revoked_at  timestamptz NULL,
    summary     text        NULL
);

CREATE INDEX IF NOT EXISTS {{events_table_tenant_idx}}
    ON {{events_table}} (tenant_id, id);
