"""Kafka security settings become the same client options for every client, secrets included
only where a client needs them."""

from __future__ import annotations

import ssl
from pathlib import Path

import faust
import pytest
from pydantic import ValidationError

from worker.kafka.access import client_security, ssl_context
from worker.settings import Settings, describe_error
from worker.stream.faust_access import faust_credentials


def make(**values: object) -> Settings:
    return Settings.model_validate(values)


def test_plaintext_by_default() -> None:
    settings = make()
    assert client_security(settings) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(settings) is None
    assert ssl_context(settings) is None


def test_sasl_ssl_with_scram() -> None:
    settings = make(
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="SCRAM-SHA-512",
        kafka_sasl_username="svc",
        kafka_sasl_password="pw",
        kafka_ssl_check_hostname=False,
    )
    options = client_security(settings)
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (options["sasl_plain_username"], options["sasl_plain_password"]) == ("svc", "pw")
    assert isinstance(options["ssl_context"], ssl.SSLContext)
    assert options["ssl_context"].check_hostname is False
    creds = faust_credentials(settings)
    assert isinstance(creds, faust.SASLCredentials)
    assert creds.protocol.value == "SASL_SSL"
    assert creds.mechanism.value == "SCRAM-SHA-512"


def test_sasl_plaintext_has_no_tls() -> None:
    settings = make(
        kafka_security_protocol="SASL_PLAINTEXT",
        kafka_sasl_mechanism="PLAIN",
        kafka_sasl_username="svc",
        kafka_sasl_password="pw",
    )
    assert "ssl_context" not in client_security(settings)
    assert faust_credentials(settings).protocol.value == "SASL_PLAINTEXT"


def test_ssl_only() -> None:
    settings = make(kafka_security_protocol="SSL")
    options = client_security(settings)
    assert options["security_protocol"] == "SSL"
    assert options["ssl_context"].check_hostname is True
    assert "sasl_plain_password" not in options
    assert isinstance(faust_credentials(settings), faust.SSLCredentials)


def test_secrets_never_show_in_the_settings_repr() -> None:
    settings = make(
        kafka_security_protocol="SASL_SSL",
        kafka_sasl_mechanism="PLAIN",
        kafka_sasl_username="svc",
        kafka_sasl_password="hunter2-secret",
    )
    assert "hunter2-secret" not in repr(settings)
    assert "hunter2-secret" not in str(settings.model_dump())


@pytest.mark.parametrize(
    ("values", "named"),
    [
        (
            {"kafka_security_protocol": "SASL_SSL"},
            "GW_KAFKA_SASL_MECHANISM, GW_KAFKA_SASL_USERNAME",
        ),
        (
            {
                "kafka_security_protocol": "SASL_SSL",
                "kafka_sasl_mechanism": "PLAIN",
                "kafka_sasl_username": "u",
            },
            "GW_KAFKA_SASL_PASSWORD required",
        ),
        ({"kafka_ssl_cafile": __file__}, "GW_KAFKA_SSL_CAFILE set but"),
        (
            {"kafka_security_protocol": "SSL", "kafka_ssl_certfile": __file__},
            "GW_KAFKA_SSL_CERTFILE and GW_KAFKA_SSL_KEYFILE go together",
        ),
        (
            {"kafka_security_protocol": "SSL", "kafka_ssl_cafile": "/no/such/ca.pem"},
            "GW_KAFKA_SSL_CAFILE: Path does not point to a file",
        ),
        ({"kafka_sasl_mechanism": "GSSAPI"}, "GW_KAFKA_SASL_MECHANISM"),
    ],
)
def test_incomplete_security_settings_name_the_variables(
    values: dict[str, object], named: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        make(**values)
    assert named in describe_error(caught.value)


def test_a_client_certificate_is_loaded(tmp_path: Path) -> None:
    missing_key = tmp_path / "client.key"
    missing_key.write_text("not a key")
    settings = make(
        kafka_security_protocol="SSL", kafka_ssl_certfile=__file__, kafka_ssl_keyfile=missing_key
    )
    with pytest.raises(ssl.SSLError):
        ssl_context(settings)
