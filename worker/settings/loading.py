"""Loading the settings from the environment, with an error an operator can act on."""

from __future__ import annotations

import re

from pydantic import AliasChoices, BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import SettingsError

from worker.faults import UsageFault
from worker.settings.model import ENV_PREFIX, NESTED_DELIMITER, Settings


class SettingsInvalidError(UsageFault):
    """The environment holds a setting the worker cannot use; the message names the variable."""


def env_names(name: str, info: FieldInfo) -> tuple[str, ...]:
    """The environment variables a field reads, the preferred one first."""
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return tuple(str(choice) for choice in alias.choices)
    return (f"{ENV_PREFIX}{name.upper()}",)


def _variable(loc: tuple[int | str, ...]) -> str:
    """The environment variable behind an error location (``topics.drafts``: GW_TOPICS__DRAFTS)."""
    if not loc:
        return "the settings"
    head = str(loc[0])
    info = Settings.model_fields.get(head)
    if info is None:  # an alias name: pydantic reports the alias it read
        return head
    names = env_names(head, info)
    if (
        len(loc) > 1
        and isinstance(info.annotation, type)
        and issubclass(info.annotation, BaseModel)
    ):
        return names[0] + NESTED_DELIMITER + NESTED_DELIMITER.join(str(p).upper() for p in loc[1:])
    return " or ".join(names)


def describe_error(exc: ValidationError | SettingsError) -> str:
    """One line naming every offending variable; never the value (it may be a secret)."""
    if isinstance(exc, SettingsError):
        match = re.search(r'field "([^"]+)"', str(exc))
        variable = _variable((match.group(1),)) if match else "the settings"
        return f"invalid setting {variable}: cannot parse the value"
    problems = [
        f"{_variable(tuple(e['loc']))}: {e['msg']}"
        if e["loc"]
        else str(e["msg"]).removeprefix("Value error, ")  # a rule across fields names them
        for e in exc.errors()
    ]
    return "invalid setting " + "; ".join(problems)


def load_settings() -> Settings:
    """The settings from the environment, or :class:`SettingsInvalidError` naming the variable."""
    try:
        return Settings()
    except (ValidationError, SettingsError) as exc:
        raise SettingsInvalidError(describe_error(exc)) from None
