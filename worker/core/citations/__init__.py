"""Citations: the grammar, extraction, look-alikes, what the stores know, quotes and removal.

- ``tokens``: the token grammar ``[OBS-12]`` and finding tokens in one string (rule 3).
- ``extraction``: every citation of an output with its field path (rule 3).
- ``lookalikes``: text a reader takes for a token that the grammar does not match (rules 2, 5).
- ``evidence``: citation references and what a store knows about each id (rule 4).
- ``quotes``: a citation's quote against its source text (rule 6).
- ``redaction``: removing tokens from text without ever creating a new one (rule 5).
"""
