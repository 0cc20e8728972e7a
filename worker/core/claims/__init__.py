"""Claims: prose read as the renderer shows it, and what each unit needs (rules 5, 6b, 7, 7b).

- ``markdown``: the block structure of a prose field (CommonMark + GFM tables).
- ``sentences``: where each sentence of a block starts and ends.
- ``units``: the units of an output that must carry support.
- ``status``: each unit's grounding status and the redacted output.
- ``hidden_words``: rule 5's hidden words on the parsed structure (regions, finest sentences).
- ``gate``: the last check of every published string as cmark-gfm renders it (rule 5).
- ``support``: does a cited unit say what its visible sources say (rule 6b).
- ``typed``: declared answer fields against the agent's settled tool facts (rule 7b).
"""
