"""``python -m service --host H --port P --data-dir DIR``: serve the API with uvicorn.

Command-line values override ``GRIDPATH_HOST``, ``GRIDPATH_PORT`` and
``GRIDPATH_DATA_DIR``; every other setting comes from the environment.

Startup fails fast, before anything is loaded or compiled: the port is bound (and
listened on) first, then the data dir's lock is taken and handed to the service;
either failing prints one line and exits with status 1.
"""

import argparse
import logging
import socket
import sys
from pathlib import Path
from typing import Final, NoReturn

import uvicorn

from service.api import create_app
from service.config import Settings
from service.store import DataDirInUseError, DataDirLock

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


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = Settings(host=args.host, port=args.port, data_dir=args.data_dir)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    try:
        sock = listen(settings.host, settings.port)
    except OSError as exc:
        fail(f"cannot listen on {settings.host}:{settings.port}: {exc.strerror or exc}")
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
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock])
    if not server.started:
        sys.exit(STARTUP_FAILED)


if __name__ == "__main__":
    main()
