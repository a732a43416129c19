"""The OpenAPI document and the interactive docs, served from the service itself.

The path and upload routes read their bodies themselves (see ``routes.paths``), so
FastAPI does not see their models: :func:`request_body` documents a body by a
reference to its model, and :func:`openapi` adds those models to the document's
components. FastAPI's own 422 answer (``HTTPValidationError``) is never sent by this
service, whose every error is an ``ErrorBody``: it is taken out of the document.

``/docs`` (Swagger UI) and ``/redoc`` load their scripts and styles from
``/static-docs``, files shipped by the ``fastapi-offline`` package, so the docs
work on a host without internet access.
"""

from pathlib import Path
from typing import Any, Final

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.responses import HTMLResponse

REF_TEMPLATE: Final = "#/components/schemas/{model}"
#: Where fastapi-offline keeps Swagger UI's and ReDoc's files.
ASSETS: Final = Path(fastapi_offline.__file__).parent / "static"
ASSETS_URL: Final = "/static-docs"

_BODY_MODELS: list[type[BaseModel]] = []


def ref(model: type[BaseModel]) -> dict[str, str]:
    """A reference to ``model`` in the document's components (added by :func:`openapi`)."""
    if model not in _BODY_MODELS:
        _BODY_MODELS.append(model)
    return {"$ref": REF_TEMPLATE.format(model=model.__name__)}


def request_body(content: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``openapi_extra`` for a route that reads its body itself: ``content`` maps media
    types to their OpenAPI media objects (use :func:`ref` for models)."""
    return {"requestBody": {"required": True, "content": content}}


def openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, built once."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    document = get_openapi(title=app.title, version=app.version, description=app.description,
                           routes=app.routes)  # fmt: skip
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    _, definitions = models_json_schema([(model, "validation") for model in _BODY_MODELS],
                                        ref_template=REF_TEMPLATE)  # fmt: skip
    for name, definition in definitions.get("$defs", {}).items():
        schemas.setdefault(name, definition)
    _drop_framework_errors(document)
    app.openapi_schema = document
    return document


def _drop_framework_errors(document: dict[str, Any]) -> None:
    """Remove FastAPI's 422 ``HTTPValidationError``, which this service never sends."""
    framework = REF_TEMPLATE.format(model="HTTPValidationError")
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            answer = operation.get("responses", {}).get("422", {})
            schema = answer.get("content", {}).get("application/json", {}).get("schema", {})
            if schema.get("$ref") == framework:
                del operation["responses"]["422"]
    schemas = document["components"]["schemas"]
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)


def install_docs(app: FastAPI) -> None:
    """Serve ``/openapi.json``, ``/docs`` and ``/redoc`` with no request leaving the host.

    The app must be made with ``docs_url=None, redoc_url=None``.
    """
    app.openapi = lambda: openapi(app)  # type: ignore[method-assign]
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS), name="static-docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - API docs",
            swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=app.openapi_url or "/openapi.json",
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
