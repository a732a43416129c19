"""``python -m service --host H --port P --data-dir DIR``: serve the API with uvicorn.

Command-line values override ``GRIDPATH_HOST``, ``GRIDPATH_PORT`` and
``GRIDPATH_DATA_DIR``; every other setting comes from the environment.

Startup fails fast, before anything is loaded or compiled: the port is bound (and
listened on) first, then the data dir's lock is taken and handed to the service;
either failing prints one line and exits with status 1.

``GRIDPATH_WORKERS=N`` (N > 1) serves the same port from N worker processes, each
with its own cache and search threads, under uvicorn's process supervisor (a worker
that dies is replaced). The workers share their maps through the store: the data
dir (this process holds its lock for them) or Redis; each follows the others' edits.
The kernels are compiled once, before the workers start.
"""

import argparse
import contextlib
import ctypes
import logging
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Final, NoReturn

import uvicorn
from fastapi import FastAPI
from uvicorn.supervisors import Multiprocess

from service.api import create_app
from service.api.connections import HeaderDeadlineProtocol
from service.api.metrics import MULTIPROC_DIR
from service.config import Settings
from service.engine import kernels_warm
from service.store import DataDirInUseError, DataDirLock, MapStore

#: Exit status when the service cannot start (port taken, data dir in use).
CANNOT_START: Final = 1
#: uvicorn's exit status when the application's startup failed.
STARTUP_FAILED: Final = 3


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    parser.add_argument("--host", default=defaults.host, help="default: %(default)s")
    parser.add_argument("--port", type=int, default=defaults.port, help="default: %(default)s")
    parser.add_argument(
        "--data-dir", type=Path, default=defaults.data_dir, help="default: %(default)s"
    )
    return parser.parse_args(argv)


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (as uvicorn would), before the app starts.
    Listening at once matters: two sockets merely bound with ``SO_REUSEADDR`` may
    share a port, and the second server would only fail later.

    Raises:
        OSError: the address is taken or cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(socket.SOMAXCONN)
    except OSError:
        sock.close()
        raise
    return sock


def fail(message: str) -> NoReturn:
    print(f"gridpath: {message}", file=sys.stderr, flush=True)
    sys.exit(CANNOT_START)


def configure_logging(settings: Settings) -> None:
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )


def worker_app() -> FastAPI:
    """The app of one worker process (``GRIDPATH_WORKERS``): settings from the
    environment, which the parent completed from its command line."""
    die_with_supervisor()
    settings = Settings()
    configure_logging(settings)
    return create_app(settings)


#: The supervisor's process id, for its workers (``die_with_supervisor``).
SUPERVISOR_PID: Final = "GRIDPATH_SUPERVISOR_PID"
#: ``prctl`` option: the signal a process gets when its parent dies (Linux).
_PR_SET_PDEATHSIG: Final = 1


def die_with_supervisor() -> None:
    """Have this worker stopped (SIGTERM: it finishes what it serves) when the
    supervisor dies, however it dies. Killed with SIGKILL, the supervisor could not
    stop its workers: they went on serving the data dir without its lock, and the
    port stayed taken, so a restart failed on it."""
    if sys.platform != "linux":
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        log = logging.getLogger("gridpath")
        log.warning("workers may outlive their supervisor: prctl failed (errno %d)",
                    ctypes.get_errno())  # fmt: skip
    supervisor = os.environ.get(SUPERVISOR_PID)
    if supervisor is not None and os.getppid() != int(supervisor):
        os.kill(os.getpid(), signal.SIGTERM)  # it died before the prctl


def compile_kernels(timeout: float) -> None:
    """Compile the kernels into numba's cache in a child process, within ``timeout``
    seconds (the workers compile what is left). The child compiles in processes of its
    own: its process group is killed with it."""
    child = subprocess.Popen([sys.executable, "-m", "service.engine"], start_new_session=True)
    try:
        child.wait(timeout)
        return
    except subprocess.TimeoutExpired:
        logging.getLogger("gridpath").warning(
            "compiling the kernels took over %g s (GRIDPATH_COMPILE_TIMEOUT_SECONDS); "
            "the workers compile them", timeout)  # fmt: skip
    finally:
        if child.returncode is None:  # timed out or interrupted: the whole group goes
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()


def serve_workers(settings: Settings, sock: socket.socket) -> None:
    """Run ``settings.workers`` worker processes on ``sock`` until a signal stops them.

    On the file store this process holds the data dir's lock for them all (another
    server on the dir is refused) and repairs what a crash left (unfinished uploads,
    torn edit log tails) before they start; they share the dir (``SharedMapStore``).
    """
    if settings.store == "file":
        try:
            lock = DataDirLock(settings.data_dir)
        except DataDirInUseError as exc:
            sock.close()
            fail(str(exc))
        MapStore(settings.data_dir, lock=lock)  # opening repairs; the lock stays held
    os.environ |= {"GRIDPATH_HOST": settings.host, "GRIDPATH_PORT": str(settings.port),
                   "GRIDPATH_DATA_DIR": str(settings.data_dir),
                   SUPERVISOR_PID: str(os.getpid())}  # fmt: skip
    if not kernels_warm():  # once here, not once per worker at the same time
        logging.getLogger("gridpath").info("compiling the kernels before the workers start")
        compile_kernels(settings.compile_timeout_seconds)
    config = uvicorn.Config(
        "service.__main__:worker_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=settings.workers,
        access_log=False,
        log_config=None,
        server_header=False,
        http=HeaderDeadlineProtocol,
    )
    # The workers' metrics meet in a folder of this run's (``api.metrics``).
    metrics = tempfile.mkdtemp(prefix="gridpath-metrics-")
    os.environ[MULTIPROC_DIR] = metrics
    try:
        Multiprocess(config, sockets=[sock]).run()
    finally:
        shutil.rmtree(metrics, ignore_errors=True)


#: The most open files the service asks for when the system allows more than it has:
#: a connection is one, and the common soft limit of 1,024 let 1,100 idle
#: connections refuse every other client.
OPEN_FILES: Final = 1 << 16


def raise_open_files_limit() -> None:
    """Raise the soft limit of open files towards ``OPEN_FILES`` (within the hard
    limit, which only root could raise)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = OPEN_FILES if hard == resource.RLIM_INFINITY else min(OPEN_FILES, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
        except (ValueError, OSError) as exc:
            logging.getLogger("gridpath").warning("open files stay at %d: %s", soft, exc)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = Settings(host=args.host, port=args.port, data_dir=args.data_dir)
    configure_logging(settings)
    raise_open_files_limit()
    try:
        sock = listen(settings.host, settings.port)
    except OSError as exc:
        fail(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}")
    if settings.workers > 1:
        serve_workers(settings, sock)
        return
    lock = None
    if settings.store == "file":  # a Redis store is shared: no lock to take
        try:
            lock = DataDirLock(settings.data_dir)
        except DataDirInUseError as exc:
            sock.close()
            fail(str(exc))
    config = uvicorn.Config(
        create_app(settings, lock=lock),
        host=settings.host,
        port=settings.port,
        access_log=False,  # gridpath.access logs one structured line per request
        log_config=None,
        server_header=False,
        http=HeaderDeadlineProtocol,
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILED)


if __name__ == "__main__":
    main()
