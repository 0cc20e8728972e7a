"""The batch loop: what happens to each batch, in order.

``loop`` (the agent body without Faust, and the deadline tick), ``pipeline`` (one batch: plan,
fetch, decide, store the turns, publish), ``resolve`` (one store call per batch, retried while
the stores are down), ``collector`` (the garbage collector kept off a batch's hot path).
"""
