"""Claims: prose read as the renderer shows it, and what each unit needs (rules 5, 6b, 7, 7b).

- ``markdown``: the block structure of a prose field (CommonMark + GFM tables).
- ``sentences``: where each sentence of a block starts and ends.
- ``units``: the units of an output that must carry support.
- ``status``: each unit's grounding status, the hidden-words rule and the redacted output.
- ``support``: does a cited unit say what its visible sources say (rule 6b).
- ``typed``: declared answer fields against the agent's settled tool facts (rule 7b).
"""
