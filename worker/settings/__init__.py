"""The one settings object. Built once at start-up and passed down; nothing else reads os.environ.

Every field reads ``GW_<FIELD>``; the three connection settings also read the plain names that
``scripts/services env`` prints (``KAFKA_BOOTSTRAP_SERVERS``, ``POSTGRES_DSN``, ``MONGO_URL``).
Each field's description is what the README's settings table says (``scripts/gen_settings_doc.py``
writes it; a test fails when it is stale).
"""

from worker.settings.loading import SettingsInvalidError, describe_error, env_names, load_settings
from worker.settings.model import ENV_PREFIX, NESTED_DELIMITER, Settings
from worker.settings.topics import TopicNames

__all__ = [
    "ENV_PREFIX",
    "NESTED_DELIMITER",
    "Settings",
    "SettingsInvalidError",
    "TopicNames",
    "describe_error",
    "env_names",
    "load_settings",
]
