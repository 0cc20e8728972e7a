"""The intake: how ``agent.drafts`` reaches a batch, in order, and what is read ahead of it.

``delivery`` (``GW_DRAFTS_INTAKE``: a Faust stream or the conductor's channel), ``take`` (the
overlapped take: the next batch fills while this one is processed), ``offsets`` (no record is
decided before an earlier one), ``lookahead`` (the next batch planned and its evidence fetched
while the current one waits on its stores and broker).
"""
