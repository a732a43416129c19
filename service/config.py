"""Every limit and default of the service, in one place (env prefix ``GRIDPATH_``)."""

from functools import lru_cache
from pathlib import Path
from typing import Final

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT: Final = Path(__file__).resolve().parents[1]


class Settings(BaseSettings):
    """Settings read from the environment, e.g. ``GRIDPATH_BENCH_DATA=/data/movingai``."""

    model_config = SettingsConfigDict(env_prefix="GRIDPATH_", extra="ignore")

    bench_data: Path = Field(
        default=REPO_ROOT.parent / "shared" / "benchmarks" / "movingai",
        description="Folder of Moving AI .map and .map.scen files (tests and benchmarks).",
    )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings()
