"""The process's runtime concerns, shared by every entry point.

- ``startup``: wait for the services a command needs, then give up in one line.
- ``event_loop``: the event loop, set once at an entry point.
- ``logs``: one JSON log stream.
- ``metrics`` and ``metrics_server``: Prometheus metrics and the pages of a process without Faust.
- ``readiness``: may this process be sent work now.
- ``retry``: capped exponential backoff for infrastructure faults.
- ``spans``: OpenTelemetry spans (off by default).
"""
