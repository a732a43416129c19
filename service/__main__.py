"""``python -m service --host H --port P --data-dir DIR``: serve the API with uvicorn.

Command-line values override ``GRIDPATH_HOST``, ``GRIDPATH_PORT`` and
``GRIDPATH_DATA_DIR``; every other setting comes from the environment.
"""

import argparse
import logging
from pathlib import Path

import uvicorn

from service.api import create_app
from service.config import Settings


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    defaults = Settings()
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    parser.add_argument("--host", default=defaults.host, help="default: %(default)s")
    parser.add_argument("--port", type=int, default=defaults.port, help="default: %(default)s")
    parser.add_argument(
        "--data-dir", type=Path, default=defaults.data_dir, help="default: %(default)s"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    settings = Settings(host=args.host, port=args.port, data_dir=args.data_dir)
    logging.basicConfig(
        level=settings.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        access_log=False,  # gridpath.access logs one structured line per request
        log_config=None,
        server_header=False,
    )


if __name__ == "__main__":
    main()
