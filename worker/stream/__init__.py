"""The imperative shell: Kafka in, the pure core in the middle, Kafka and Postgres out."""
