"""The test bed: Kafka, PostgreSQL and a MongoDB-protocol server on loopback, per checkout.

``python -m dev.testbed COMMAND`` from the repository root, or ``scripts/services COMMAND`` from
anywhere (``--help`` lists the commands). One module per server (``kafka``, ``postgres``,
``mongo``), each with ``start``/``stop``/``running``; ``bed`` runs them as a whole; ``ports``,
``process``, ``net``, ``cache`` and ``layout`` are what they share.

Only the standard library is used: the bed starts before the project's virtualenv exists, under
the machine's ``python3``.
"""
