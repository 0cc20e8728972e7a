-- The citation ledger (contract §6): one row per distinct cited (kind, id) of a decided draft.
-- Metadata only: there is no column for text, title, quote or snippet, and there never may be.
-- The unique key makes a replayed ledger batch add nothing (INSERT ... ON CONFLICT DO NOTHING).

CREATE TABLE IF NOT EXISTS {{ledger_table}} (
    tenant_id       text        NOT NULL,
    turn_id         text        NOT NULL,
    draft_id        text        NOT NULL,
    attempt         integer     NOT NULL CHECK (attempt >= 0),
    outcome         text        NOT NULL
        CHECK (outcome IN ('grounded', 'regenerate', 'could_not_ground')),
    kind            text        NOT NULL CHECK (kind IN ('OBS', 'DOC', 'EVT')),
    -- numeric, not bigint: a dangling id may exceed 2^63-1 and is recorded exactly.
    source_id       numeric     NOT NULL CHECK (source_id >= 0 AND source_id = trunc(source_id)),
    resolution      text        NOT NULL
        CHECK (resolution IN ('dangling', 'revoked', 'acl_redacted', 'not_in_retrieval',
                              'resolved')),
    quote_check     text        NOT NULL DEFAULT 'none'
        CHECK (quote_check IN ('none', 'exact', 'tolerant', 'mismatch')),
    paths           text[]      NOT NULL DEFAULT '{}',
    policy_version  text        NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    event_id        text        NOT NULL,
    CONSTRAINT {{ledger_table_key}} UNIQUE (tenant_id, turn_id, draft_id, kind, source_id)
);

-- Audit look-ups: "who was shown / denied this source?"
CREATE INDEX IF NOT EXISTS {{ledger_table_source_idx}}
    ON {{ledger_table}} (tenant_id, kind, source_id);
