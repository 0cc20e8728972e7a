-- The support of each cited source (contract rule 6b, §6): the lowest support of the checked
-- claim units citing it, 'none' where no unit citing it was checked. A default, so writers
-- that do not know the column (and rows written before it) still insert.

ALTER TABLE {{ledger_table}}
    ADD COLUMN IF NOT EXISTS support text NOT NULL DEFAULT 'none'
        CHECK (support IN ('supported', 'weak', 'unsupported', 'unchecked', 'none'));
