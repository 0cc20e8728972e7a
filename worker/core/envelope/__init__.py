"""What arrives: the draft envelope and its raw output (contract §2, rule 1).

- ``draft``: the envelope read strictly, and the dead-letter classes of a record that is none.
- ``canonical``: rule 1, a model's raw text turned into the JSON object it meant, or not.
- ``json_text``: untrusted JSON read the way the core needs it.
- ``dead_letter``: a record that is dead-lettered, as its dead letter (contract §7).
"""
