"""The one settings object. Built once at start-up and passed down; nothing else reads os.environ.

Every field reads ``GW_<FIELD>``; the three connection settings also read the plain names that
``scripts/services env`` prints (``KAFKA_BOOTSTRAP_SERVERS``, ``POSTGRES_DSN``, ``MONGO_URL``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class TopicNames(BaseModel):
    """Topic names (contract §1). Override with ``GW_TOPICS__DRAFTS=...`` and so on."""

    model_config = ConfigDict(frozen=True)

    drafts: str = "agent.drafts"
    regenerate: str = "agent.regenerate"
    validated: str = "answers.validated"
    could_not_ground: str = "answers.could_not_ground"
    ledger: str = "citations.ledger"
    dlq: str = "agent.drafts.dlq"


class Settings(BaseSettings):
    """Everything the worker, the sink and the CLI tools can be configured with."""

    model_config = SettingsConfigDict(
        env_prefix="GW_", env_nested_delimiter="__", frozen=True, extra="ignore"
    )

    # --- connections -------------------------------------------------------------------------
    kafka_bootstrap_servers: str = Field(
        default="127.0.0.1:9092",
        validation_alias=AliasChoices("GW_KAFKA_BOOTSTRAP_SERVERS", "KAFKA_BOOTSTRAP_SERVERS"),
    )
    postgres_dsn: SecretStr = Field(
        default=SecretStr("postgresql://postgres@127.0.0.1:5432/grounding"),
        validation_alias=AliasChoices("GW_POSTGRES_DSN", "POSTGRES_DSN"),
    )
    mongo_url: SecretStr = Field(
        default=SecretStr("mongodb://127.0.0.1:27017/"),
        validation_alias=AliasChoices("GW_MONGO_URL", "MONGO_URL"),
    )
    mongo_database: str = "grounding"

    # --- evidence-store names (contract §8) ------------------------------------------------------
    observations_table: str = "observations"
    events_table: str = "events"
    ledger_table: str = "citation_ledger"
    documents_collection: str = "documents"
    store_timeout_s: float = Field(default=5.0, gt=0)
    postgres_pool_size: int = Field(default=4, ge=1)

    # --- topics ----------------------------------------------------------------------------------
    topics: TopicNames = TopicNames()
    topic_partitions: int = Field(default=4, ge=1)
    topic_replication_factor: int = Field(default=1, ge=1)

    # --- the worker ------------------------------------------------------------------------------
    app_id: str = "grounding-worker"
    #: Kafka consumer-group session timeout: how long a crashed worker keeps its partitions
    #: before the group hands them to another member (or to itself, restarted).
    broker_session_timeout_s: float = Field(default=60.0, ge=6.0)
    batch_size: int = Field(default=200, ge=1)
    batch_wait_s: float = Field(default=0.05, gt=0)
    #: Drafts larger than this are dead-lettered as ``oversized`` (contract §2).
    max_draft_bytes: int = Field(default=1024 * 1024, ge=1024)
    #: ``None``: retry an unavailable store forever (contract §7 default).
    retry_budget: int | None = Field(default=None, ge=0)
    retry_initial_backoff_s: float = Field(default=0.2, gt=0)
    retry_max_backoff_s: float = Field(default=10.0, gt=0)
    #: How long a turn's state is kept after it ends (contract §3.8, default 7 days).
    turn_retention_s: float = Field(default=7 * 24 * 3600, gt=0)
    #: The stall watchdog: how often it compares committed offsets with the log end while the
    #: agent is idle, and how long a partition may lag without progress before it is re-read.
    stall_check_interval_s: float = Field(default=2.0, gt=0)
    stall_after_s: float = Field(default=6.0, gt=0)
    #: Table recovery that makes no progress for this long exits the worker (code 75) for its
    #: supervisor to restart it: faust-streaming may never finish a recovery begun around a
    #: broker restart (docs/decisions.md).
    recovery_stall_exit_s: float = Field(default=60.0, gt=0)
    #: How often the worker looks for regeneration deadlines that have passed.
    deadline_scan_interval_s: float = Field(default=1.0, gt=0)
    #: Per-tenant policies (JSON file of a ``PolicyBook``); the default policy when unset.
    policy_file: Path | None = None
    web_port: int = Field(default=6066, ge=0)
    web_host: str = "127.0.0.1"
    data_dir: Path = Path(".faust-data")
    log_level: str = "INFO"
    #: Run the ledger sink (citations.ledger -> Postgres) inside the worker process.
    run_ledger_sink: bool = True
    log_json: bool = True

    # --- replay ----------------------------------------------------------------------------------
    #: Past this many replays a dead letter is skipped by ``replay`` (contract §7).
    replay_max_count: int = Field(default=3, ge=0)
    #: The durable replay log (compacted topic keyed ``<partition>:<offset>``); ``None`` means
    #: ``<topics.dlq>.replayed``.
    replay_log_topic: str | None = None
    #: ``replay`` gives up when the broker makes no progress for this long.
    replay_read_timeout_s: float = Field(default=30.0, gt=0)

    @property
    def replay_log(self) -> str:
        """The replay log's topic name."""
        return self.replay_log_topic or f"{self.topics.dlq}.replayed"
