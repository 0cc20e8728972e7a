"""The citation ledger sink: ``citations.ledger`` into Postgres, apart from verdicts."""
