"""The watchdogs: exit when table recovery stops making progress (``recovery``), re-read a
partition whose fetched records were never delivered (``stall``)."""
