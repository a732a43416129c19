"""Settings: every limit from GRIDPATH_* variables."""

import re

import pytest
import yaml

from service.config import REPO_ROOT, Settings, parse_api_keys

#: Settings that compose does not pass: the command line sets them in the image, the
#: thread count defaults to the container's cores, benchmark data is not deployed.
NOT_IN_COMPOSE = {"host", "port", "data_dir", "search_threads", "bench_data"}


def test_environment_overrides_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIDPATH_MAX_BATCH", "7")
    monkeypatch.setenv("GRIDPATH_API_KEY", "s3cret-key")
    settings = Settings()
    assert settings.max_batch == 7
    assert settings.api_key is not None
    assert settings.api_key.get_secret_value() == "s3cret-key"
    assert "s3cret-key" not in repr(settings)


def test_limits_must_be_positive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIDPATH_MAX_BATCH", "0")
    with pytest.raises(ValueError, match="max_batch"):
        Settings()


def test_an_empty_api_key_means_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # Regression: docker compose passes GRIDPATH_API_KEY="" for an unset variable,
    # and every upload was refused as Unauthorized.
    monkeypatch.setenv("GRIDPATH_API_KEY", "")
    assert Settings().api_key is None


def test_an_empty_key_list_and_metrics_key_mean_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIDPATH_API_KEYS", "")
    monkeypatch.setenv("GRIDPATH_METRICS_KEY", "")
    settings = Settings()
    assert (settings.api_keys, settings.metrics_key) == (None, None)


def test_scoped_keys_parse_and_never_print(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRIDPATH_API_KEYS", " read:game-key , WRITE:pipeline-key,")
    settings = Settings()
    assert settings.api_keys is not None
    assert parse_api_keys(settings.api_keys.get_secret_value()) == (
        ("read", "game-key"), ("write", "pipeline-key"))  # fmt: skip
    assert "game-key" not in repr(settings)


@pytest.mark.parametrize(
    ("keys", "message"),
    [("read:ok,admin:hidden-key", "entry 2 of GRIDPATH_API_KEYS must be 'read:<key>'"),
     ("hidden-key", "entry 1 of GRIDPATH_API_KEYS must be"),
     ("write:  ", "entry 1 of GRIDPATH_API_KEYS has an empty key")],
)  # fmt: skip
def test_a_malformed_key_list_is_refused_without_quoting_a_key(
    monkeypatch: pytest.MonkeyPatch, keys: str, message: str
) -> None:
    monkeypatch.setenv("GRIDPATH_API_KEYS", keys)
    with pytest.raises(ValueError, match=re.escape(message)) as refused:
        Settings()
    assert "hidden" not in str(refused.value)


def test_cluster_settings_and_an_empty_cluster_size(monkeypatch: pytest.MonkeyPatch) -> None:
    # docker compose passes GRIDPATH_CLUSTER_SIZE="" when it is unset: the default.
    monkeypatch.setenv("GRIDPATH_CLUSTER_SIZE", "")
    assert Settings().cluster_size is None
    monkeypatch.setenv("GRIDPATH_CLUSTER_SIZE", "16")
    monkeypatch.setenv("GRIDPATH_MAX_TABLE_BYTES", "1048576")
    settings = Settings()
    assert (settings.cluster_size, settings.max_table_bytes) == (16, 1 << 20)
    monkeypatch.setenv("GRIDPATH_CLUSTER_SIZE", "2")
    with pytest.raises(ValueError, match="cluster_size"):
        Settings()


def test_every_setting_is_documented_and_passed_through_by_compose() -> None:
    operations = (REPO_ROOT / "docs" / "operations.md").read_text()
    compose = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
    environment = compose["services"]["gridpath"]["environment"]
    for name, field in Settings.model_fields.items():
        variable = f"GRIDPATH_{name.upper()}"
        assert f"| `{variable}` |" in operations, variable
        if name in NOT_IN_COMPOSE:
            continue
        default = field.get_default(call_default_factory=True)
        passed = re.fullmatch(r"\$\{" + variable + r":-(.*)\}", environment[variable])
        assert passed, (variable, environment.get(variable))
        expected = (
            ""
            if default is None
            else str(default).lower()
            if isinstance(default, bool)
            else f"{default:g}"
            if isinstance(default, float)
            else str(default)
        )
        assert passed.group(1) == expected, (variable, passed.group(1), default)
