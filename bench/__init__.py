"""End-to-end benchmark of the grounding worker; ``scripts/bench`` is the entry point.

Every figure is printed next to a baseline measured in the same run on the same broker (a raw
aiokafka forwarder and a do-nothing Faust agent), because the machine is shared and noisy: the
ratio is the figure to compare across runs, not the absolute drafts/s.
"""
