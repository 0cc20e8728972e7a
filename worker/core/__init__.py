"""The pure core: values in, values out.

Nothing in this package imports Faust, aiokafka, asyncpg or pymongo, reads the clock, or logs;
the stream loop in ``worker.stream`` feeds it and routes what it returns.
"""
