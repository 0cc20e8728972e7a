"""The publisher's murmur2 is Kafka's: the same partition as aiokafka's partitioner for any key."""

from __future__ import annotations

import random

from aiokafka.partitioner import DefaultPartitioner
from aiokafka.partitioner import murmur2 as aiokafka_murmur2
from hypothesis import given
from hypothesis import strategies as st

from worker.kafka.publisher import murmur2


def test_every_length_and_tail_matches_aiokafka() -> None:
    rng = random.Random(10)
    for length in range(130):
        for _ in range(40):
            key = bytes(rng.randrange(256) for _ in range(length))
            assert murmur2(key) == aiokafka_murmur2(key), (length, key)


@given(st.binary(max_size=300))
def test_any_key_hashes_as_aiokafka_does(key: bytes) -> None:
    assert murmur2(key) == aiokafka_murmur2(key)


def test_known_values_of_the_java_client() -> None:
    # org.apache.kafka.common.utils.Utils.murmur2 (as Kafka's own tests list them, unsigned)
    assert murmur2(b"21") == -973932308 & 0xFFFFFFFF
    assert murmur2(b"foobar") == -790332482 & 0xFFFFFFFF
    assert murmur2(b"a-little-bit-long-string") == -985981536 & 0xFFFFFFFF
    assert murmur2(b"a-little-bit-longer-string") == -1486304829 & 0xFFFFFFFF
    assert murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971 & 0xFFFFFFFF
    assert murmur2(b"abc") == 479470107


def test_a_turn_key_lands_where_aiokafka_would_put_it() -> None:
    parts = [0, 1, 2, 3, 4, 5]
    partitioner = DefaultPartitioner()
    for n in range(500):
        key = f"turn-{n:x}-{n * 7919}".encode()
        assert parts[(murmur2(key) & 0x7FFFFFFF) % len(parts)] == partitioner(key, parts, parts)
