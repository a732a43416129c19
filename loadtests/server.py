"""Run the service for a load test: ``python -m service`` on a free loopback port."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from service.config import REPO_ROOT

HOST: Final = "127.0.0.1"

READY_TIMEOUT_S: Final = 180.0

STOP_TIMEOUT_S: Final = 15.0

#: No proxies: the service is on loopback whatever ``http_proxy`` says.
_OPENER: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http(
    method: str, url: str, body: bytes | None = None, content_type: str | None = None
) -> tuple[int, bytes]:
    """One request with the standard library; returns the status and the body."""
    headers = {"Content-Type": content_type} if content_type else {}
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with _OPENER.open(request, timeout=60) as response:
            status: int = response.status
            data: bytes = response.read()
            return status, data
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def post_json(url: str, body: str) -> Any:
    """POST a JSON body; the decoded answer, or RuntimeError unless it is a 200."""
    status, data = http("POST", url, body.encode("ascii"), "application/json")
    if status != 200:
        raise RuntimeError(f"POST {url} answered {status}: {data[:500]!r}")
    return json.loads(data)


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Server:
    """A running service: its base URL, the file its output goes to, its process id."""

    base: str
    log: Path
    pid: int = 0


@contextmanager
def serve(workdir: Path, env: dict[str, str] | None = None, name: str = "server"
          ) -> Iterator[Server]:  # fmt: skip
    """Run ``python -m service`` until the block ends; yields once ``/readyz`` is 200.

    ``env``: settings on top of the environment; ``name``: of its data dir
    (``<name>-data``, or ``data`` for the default) and log (``<name>.log``)."""
    port = free_port()
    data_dir = workdir / ("data" if name == "server" else f"{name}-data")
    log = workdir / f"{name}.log"
    env = {**os.environ, "GRIDPATH_LOG_LEVEL": "warning", **(env or {})}
    argv = [sys.executable, "-m", "service", "--host", HOST, "--port", str(port)]
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*argv, "--data-dir", str(data_dir)],
            cwd=REPO_ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            server = Server(f"http://{HOST}:{port}", log, process.pid)
            wait_ready(process, server)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_ready(process: subprocess.Popen[bytes], server: Server) -> None:
    """Poll ``/readyz`` until 200; RuntimeError if the server dies or takes too long."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"server exited with {process.returncode} before it was ready:\n"
                + server.log.read_text(encoding="utf-8", errors="replace")
            )
        try:
            status, _ = http("GET", f"{server.base}/readyz")
        except OSError:
            status = 0
        if status == 200:
            return
        time.sleep(0.2)
    raise RuntimeError(f"server not ready after {READY_TIMEOUT_S:.0f} s")


def upload(server: Server, map_path: Path) -> str:
    """POST the ``.map`` file as text/plain; its id."""
    status, data = http("POST", f"{server.base}/v1/maps", map_path.read_bytes(), "text/plain")
    if status != 201:
        raise RuntimeError(f"upload of {map_path} answered {status}: {data[:500]!r}")
    map_id: str = json.loads(data)["id"]
    return map_id
