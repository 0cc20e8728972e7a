"""The settings object's fields: every setting of every process, with its default and rules."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import (
    AliasChoices,
    Field,
    FilePath,
    SecretStr,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from worker.settings.topics import TopicNames

ENV_PREFIX = "GW_"
NESTED_DELIMITER = "__"


class Settings(BaseSettings):
    """Everything the worker, the sink and the CLI tools can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter=NESTED_DELIMITER, frozen=True, extra="ignore"
    )

    # --- connections -------------------------------------------------------------------------
    kafka_bootstrap_servers: str = Field(
        default="127.0.0.1:9092",
        validation_alias=AliasChoices("GW_KAFKA_BOOTSTRAP_SERVERS", "KAFKA_BOOTSTRAP_SERVERS"),
        description="Kafka brokers, `host:port[,host:port]`",
    )
    kafka_security_protocol: Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"] = Field(
        default="PLAINTEXT",
        description="how every Kafka client connects (managed clusters: `SASL_SSL` or `SSL`)",
    )
    kafka_sasl_mechanism: Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] | None = Field(
        default=None, description="SASL mechanism; required with `SASL_*`"
    )
    kafka_sasl_username: str | None = Field(
        default=None, description="SASL user; required with `SASL_*`"
    )
    kafka_sasl_password: SecretStr | None = Field(
        default=None, description="SASL password; required with `SASL_*`; a secret, never logged"
    )
    kafka_ssl_cafile: FilePath | None = Field(
        default=None,
        description="PEM file of the CA(s) that signed the brokers' certificates; "
        "unset: the system's CAs",
    )
    kafka_ssl_certfile: FilePath | None = Field(
        default=None, description="client certificate (PEM) for mutual TLS; needs the key file"
    )
    kafka_ssl_keyfile: FilePath | None = Field(
        default=None, description="private key (PEM) of the client certificate"
    )
    kafka_ssl_key_password: SecretStr | None = Field(
        default=None, description="password of an encrypted key file; a secret, never logged"
    )
    kafka_ssl_check_hostname: bool = Field(
        default=True,
        description="verify that a broker's certificate names the host connected to",
    )
    postgres_dsn: SecretStr = Field(
        default=SecretStr("postgresql://postgres@127.0.0.1:5432/grounding"),
        validation_alias=AliasChoices("GW_POSTGRES_DSN", "POSTGRES_DSN"),
        description="PostgreSQL (observations, events, ledger); a secret, never logged",
    )
    mongo_url: SecretStr = Field(
        default=SecretStr("mongodb://127.0.0.1:27017/"),
        validation_alias=AliasChoices("GW_MONGO_URL", "MONGO_URL"),
        description="MongoDB (documents); a secret, never logged",
    )
    mongo_database: str = Field(default="grounding", description="database of the documents")

    # --- evidence-store names (contract §8) ------------------------------------------------------
    observations_table: str = Field(default="observations", description="Postgres table of OBS")
    events_table: str = Field(default="events", description="Postgres table of EVT")
    ledger_table: str = Field(default="citation_ledger", description="Postgres ledger table")
    documents_collection: str = Field(default="documents", description="MongoDB collection of DOC")
    store_timeout_s: float = Field(default=5.0, gt=0, description="timeout of one store query")
    postgres_pool_size: int = Field(default=4, ge=1, description="Postgres connections")

    # --- topics ----------------------------------------------------------------------------------
    topics: TopicNames = Field(default=TopicNames(), description="topic names")
    topic_partitions: int = Field(
        default=4,
        ge=1,
        description="partitions of every topic (the same everywhere: keys co-locate)",
    )
    topic_replication_factor: int = Field(
        default=1, ge=1, description="replication factor of created topics (production: 3)"
    )
    topic_min_insync_replicas: int | None = Field(
        default=None,
        ge=1,
        description="`min.insync.replicas` of created topics (production: 2); "
        "unset: the broker's default",
    )

    # --- the worker ------------------------------------------------------------------------------
    app_id: str = Field(
        default="grounding-worker", description="Kafka consumer group and Faust app id"
    )
    broker_session_timeout_s: float = Field(
        default=60.0,
        ge=6.0,
        description="how long a crashed worker keeps its partitions before the group moves them",
    )
    broker_metadata_max_age_s: float = Field(
        default=30.0,
        ge=1.0,
        description="how often the consumer re-reads the cluster's metadata: a worker that joined "
        "before its topics were visible (a broker just started) is given its partitions at the "
        "next read (the client's default waits 5 minutes)",
    )
    drafts_intake: Literal["channel", "stream"] = Field(
        default="channel",
        description="how drafts reach the batch: `stream`, a Faust agent's stream (an event, a "
        "stream pass and an acknowledgement per draft); `channel`, the topic's conductor delivery "
        "straight into the batch buffer, acknowledged through the consumer "
        "(worker/stream/intake/delivery.py)",
    )
    batch_size: int = Field(default=200, ge=1, description="drafts per batch")
    batch_wait_s: float = Field(
        default=0.005,
        gt=0,
        description="the longest a batch waits for more drafts after its first one "
        "(a saturated stream)",
    )
    batch_quiet_s: float = Field(
        default=0.002,
        gt=0,
        description="a batch also closes once no draft arrived for this long (a thin stream); "
        "the next batch is collected while the current one is processed",
    )
    batch_look_ahead: bool = Field(
        default=True,
        description="once the next batch is complete in the take's buffer while one is decided, "
        "admit its records and fetch their evidence meanwhile (worker/stream/intake/lookahead.py)",
    )
    gc_paused_in_batch: bool = Field(
        default=True,
        description="no automatic garbage collection while a batch is processed, and the "
        "start-up heap frozen (worker/stream/processing/collector.py)",
    )
    producer_compression: Literal["none", "gzip", "snappy", "lz4", "zstd"] = Field(
        default="zstd",
        description="compression of every record the worker produces (zstd: ~4.5 us a record, "
        "outputs ~10x smaller)",
    )
    produce_batched: bool = Field(
        default=True,
        description="a batch's records are handed to the producer in one go, grouped by topic "
        "and partition in decision order (aiokafka send_batch), not one send per record",
    )
    consumer_fetch_max_wait_s: float = Field(
        default=0.1,
        gt=0,
        le=1.5,
        description="the longest the broker may hold a fetch of the drafts consumer (Faust "
        "fixes 1.5 s; a fetch that covers only idle partitions then stalls the drafts behind "
        "it: worker/stream/faust_internals.py)",
    )
    producer_linger_s: float = Field(
        default=0.0,
        ge=0,
        description="how long the producer may hold a record to fill a request (a batch's "
        "records are handed over together already)",
    )
    max_draft_bytes: int = Field(
        default=1024 * 1024,
        ge=1024,
        description="larger drafts are dead-lettered `oversized` (contract §2)",
    )
    retry_budget: int | None = Field(
        default=None,
        ge=0,
        description="retries of an unavailable store before `infra_unavailable`; unset: forever",
    )
    retry_initial_backoff_s: float = Field(default=0.2, gt=0, description="first retry backoff")
    retry_max_backoff_s: float = Field(default=10.0, gt=0, description="backoff cap")
    turn_retention_s: float = Field(
        default=7 * 24 * 3600,
        gt=0,
        description="how long a finished turn's state is kept (contract §3.8)",
    )
    stall_check_interval_s: float = Field(
        default=2.0,
        gt=0,
        description="how often the stall watchdog compares committed offsets with the log end",
    )
    stall_after_s: float = Field(
        default=6.0,
        gt=0,
        description="how long a partition may lag without progress before it is re-read",
    )
    recovery_stall_exit_s: float = Field(
        default=60.0,
        gt=0,
        description="table recovery that makes no progress for this long exits the worker "
        "(code 75) for its supervisor to restart it",
    )
    slow_batch_report_s: float = Field(
        default=60.0,
        gt=0,
        description="a batch in hand for this long is logged (batch.slow) with what every task "
        "awaits, and again at each further interval; nothing else changes",
    )
    deadline_scan_interval_s: float = Field(
        default=1.0, gt=0, description="how often regeneration deadlines are looked for"
    )
    policy_file: Path | None = Field(
        default=None,
        description="per-tenant policy book, JSON (`worker/core/claims/policy.py`): hedge / omit / "
        "refuse, hedge sentence, auto-apply threshold, regeneration deadline (default 120 s), "
        "support check enforce / advisory / off (default enforce), typed claims; "
        "unset: the default policy for every tenant",
    )
    startup_timeout_s: float = Field(
        default=120.0,
        ge=0,
        description="how long a command waits at start for Kafka (`run`, `ledger-sink`, "
        "`topics`) or the stores (`migrate`, `seed-demo`) before it gives up with exit 3; "
        "0: wait for ever",
    )
    otel_enabled: bool = Field(
        default=False,
        description="OpenTelemetry spans per batch and per draft, exported over OTLP "
        "(`OTEL_EXPORTER_OTLP_*`; needs the `otel` extra); derived messages then name the "
        "worker's span as parent",
    )
    otel_service_name: str = Field(
        default="grounding-worker", description="`service.name` of the worker's spans"
    )
    ready_store_unreachable_s: float = Field(
        default=30.0,
        gt=0,
        description="`/ready` turns false once a store has failed every call for this long",
    )
    shutdown_timeout_s: float = Field(
        default=45.0,
        gt=0,
        description="after SIGTERM the worker exits within this long even if a batch still waits "
        "for a store (`shutdown.forced`; that batch is decided again by the next owner); keep it "
        "below the pod's termination grace period",
    )
    ready_kafka_unreachable_s: float = Field(
        default=15.0,
        gt=0,
        description="`/ready` turns false, and `kafka.unreachable` is logged once, after the "
        "broker has failed every metadata probe for this long (`kafka.recovered` once it answers)",
    )
    web_port: int = Field(
        default=7066,
        ge=0,
        le=65535,
        description="port of `/health`, `/ready` and `/metrics` (`ledger-sink` alone: "
        "`/health`, `/metrics`); 0: any free port",
    )
    web_host: str = Field(default="127.0.0.1", description="address the web port binds")
    data_dir: Path = Field(
        default=Path(".faust-data"),
        description="Faust's local state (the RocksDB turn store lives here: keep it on a volume)",
    )
    turn_store: Literal["rocksdb", "memory"] = Field(
        default="rocksdb",
        description="where the turn table lives: `rocksdb` (on disk; a restart reads only the "
        "changelog written since) or `memory` (a restart replays the whole changelog)",
    )
    rocksdb_write_buffer_mib: int = Field(
        default=8,
        ge=1,
        description="RocksDB memtable size of each turn-table partition (two per partition, "
        "active and standby partitions alike); Faust's default is 64 MiB x 3",
    )
    rocksdb_block_cache_mib: int = Field(
        default=16,
        ge=1,
        description="RocksDB block cache of each turn-table partition; Faust's default is 2 GiB",
    )
    table_standby_replicas: int = Field(
        default=0,
        ge=0,
        description="standby copies of the turn table kept by other workers (production: 1)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="INFO", description="log level"
    )
    run_ledger_sink: bool = Field(
        default=True,
        description="run the ledger sink (citations.ledger -> Postgres) in the worker process",
    )
    log_json: bool = Field(default=True, description="JSON log lines (false: key=value text)")
    event_loop: Literal["uvloop", "asyncio"] = Field(
        default="uvloop",
        description="the process's event loop: uvloop (libuv, less CPU per record) or the "
        "standard library's",
    )
    thread_switch_interval_s: float = Field(
        default=0.0005,
        gt=0,
        le=0.1,
        description="how often the interpreter lock may pass between threads "
        "(sys.setswitchinterval; CPython's default is 0.005): Faust reads Kafka in a thread "
        "of its own beside the one that decides batches (worker/runtime/event_loop.py)",
    )

    # --- replay ----------------------------------------------------------------------------------
    replay_max_count: int = Field(
        default=3, ge=0, description="`replay` skips dead letters replayed this often"
    )
    replay_log_topic: str | None = Field(
        default=None,
        description="the replay log (compacted, keyed `<partition>:<offset>`); "
        "unset: `<dlq topic>.replayed`",
    )
    replay_read_timeout_s: float = Field(
        default=30.0,
        gt=0,
        description="`replay` gives up when the broker makes no progress for this long",
    )

    @model_validator(mode="after")
    def _min_insync_fits(self) -> Settings:
        isr = self.topic_min_insync_replicas
        if isr is not None and isr > self.topic_replication_factor:
            raise ValueError(
                f"GW_TOPIC_MIN_INSYNC_REPLICAS={isr} exceeds GW_TOPIC_REPLICATION_FACTOR="
                f"{self.topic_replication_factor}: no write could ever be acknowledged"
            )
        return self

    @model_validator(mode="after")
    def _kafka_security_is_complete(self) -> Settings:
        protocol = self.kafka_security_protocol
        if protocol.startswith("SASL_"):
            missing = [
                f"GW_{name.upper()}"
                for name in ("kafka_sasl_mechanism", "kafka_sasl_username", "kafka_sasl_password")
                if getattr(self, name) is None
            ]
            if missing:
                raise ValueError(
                    f"{', '.join(missing)} required with GW_KAFKA_SECURITY_PROTOCOL={protocol}"
                )
        if not protocol.endswith("SSL"):
            tls = [
                f"GW_{name.upper()}"
                for name in ("kafka_ssl_cafile", "kafka_ssl_certfile", "kafka_ssl_keyfile")
                if getattr(self, name) is not None
            ]
            if tls:
                raise ValueError(
                    f"{', '.join(tls)} set but GW_KAFKA_SECURITY_PROTOCOL={protocol} uses no TLS"
                )
        if (self.kafka_ssl_certfile is None) != (self.kafka_ssl_keyfile is None):
            raise ValueError("GW_KAFKA_SSL_CERTFILE and GW_KAFKA_SSL_KEYFILE go together")
        return self

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_level(cls, value: object) -> object:
        return value.upper() if isinstance(value, str) else value

    @property
    def replay_log(self) -> str:
        """The replay log's topic name."""
        return self.replay_log_topic or f"{self.topics.dlq}.replayed"
