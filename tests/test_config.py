"""Settings: every limit from GRIDPATH_* variables."""

import pytest

from service.config import Settings


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
