"""The test bed answers: one real round trip to each server with the client library the worker uses.

Names are unique per run, so the tests pass against a test bed that has served earlier runs.
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from pymongo import ASCENDING, AsyncMongoClient

pytestmark = pytest.mark.integration


async def test_kafka_message_round_trips_through_a_consumer_group(kafka_bootstrap: str) -> None:
    """Kafka 4 dropped old protocol versions: this proves aiokafka still joins a group, fetches
    and commits against the broker."""
    topic = f"smoke-{uuid.uuid4().hex}"
    group = f"smoke-{uuid.uuid4().hex}"
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka_bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=1)])
    finally:
        await admin.close()

    producer = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, acks="all")
    await producer.start()
    try:
        sent = await producer.send_and_wait(topic, key=b"t-91c2", value=b'{"schema_version":1}')
    finally:
        await producer.stop()

    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=kafka_bootstrap,
        group_id=group,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
    )
    await consumer.start()
    try:
        message = await asyncio.wait_for(consumer.getone(), timeout=30)
        await consumer.commit()
        partition = TopicPartition(topic, message.partition)
        committed = await consumer.committed(partition)
        assignment = consumer.assignment()
    finally:
        await consumer.stop()

    assert (message.key, message.value) == (b"t-91c2", b'{"schema_version":1}')
    assert (message.partition, message.offset) == (sent.partition, sent.offset)
    assert committed == sent.offset + 1
    assert {tp.partition for tp in assignment} == {0, 1, 2}


async def test_postgres_answers_a_query(postgres_dsn: str) -> None:
    conn = await asyncpg.connect(postgres_dsn, timeout=10)
    try:
        await conn.execute("CREATE TEMP TABLE smoke (id bigint PRIMARY KEY, summary text NOT NULL)")
        await conn.execute("INSERT INTO smoke VALUES ($1, $2), ($3, $4)", 7, "seven", 9, "nine")
        rows = await conn.fetch("SELECT id, summary FROM smoke WHERE id = ANY($1) ORDER BY id", [9])
        database = await conn.fetchval("SELECT current_database()")
    finally:
        await conn.close()

    assert [tuple(r) for r in rows] == [(9, "nine")]
    assert database == "grounding"


async def test_mongo_inserts_and_finds_a_document(mongo_url: str) -> None:
    """The evidence-store shape the worker relies on: int `_id`, a (tenant_id, _id) index and a
    batched `$in` lookup restricted to one tenant."""
    client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(
        mongo_url, serverSelectionTimeoutMS=10_000
    )
    database = f"smoke_{uuid.uuid4().hex}"
    try:
        documents = client[database]["documents"]
        index = await documents.create_index([("tenant_id", ASCENDING), ("_id", ASCENDING)])
        await documents.insert_many(
            [
                {"_id": 9931, "tenant_id": "acme", "text": "Quarterly revenue rose 4%."},
                {"_id": 9932, "tenant_id": "globex", "text": "Another tenant's document."},
            ]
        )
        cursor = documents.find({"tenant_id": "acme", "_id": {"$in": [9931, 9932, 1]}})
        found = await cursor.to_list()
        indexes = await documents.index_information()
    finally:
        await client.drop_database(database)
        await client.close()

    assert found == [{"_id": 9931, "tenant_id": "acme", "text": "Quarterly revenue rose 4%."}]
    assert indexes[index]["key"] == [("tenant_id", 1), ("_id", 1)]
