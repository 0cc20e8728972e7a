"""What leaves: the output messages (contract §3-§6), records, their wire form, trace context.

- ``models``: one model per outgoing message.
- ``wire``: the one serializer of outgoing messages.
- ``records``: a record as read (``Incoming``) and as appended (``OutRecord``).
- ``tracecontext``: the one ``traceparent`` reader, and what may be propagated.
"""
