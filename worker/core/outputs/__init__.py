"""The agent-output schemas and their validation (contract rule 2).

- ``schemas``: the three outputs as closed, strict pydantic models.
- ``shapes``: a cheap proof that an output has its schema's shape, so pydantic need not look.
- ``validation``: validating an output, and the field path a failure names.
- ``dot_paths``: the dot paths a tenant's policy may name, checked against the schemas.
"""
