"""The HTTP layer: routes, schemas, the one error renderer. Never imports numba."""

from service.api.app import create_app

__all__ = ["create_app"]
