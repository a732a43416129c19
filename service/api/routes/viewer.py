"""``/viewer``: a web page to look at maps and paths, served by the service itself.

Hand-written files in ``service/api/static/viewer``, the page and its ES modules (no
framework, no build step): the page only talks to this service's own API, so it works
on a host without internet access. Its Content-Security-Policy holds the browser to
that: scripts, styles, images and requests from this origin only. The page is public
(it holds no data); the API calls it makes need the key like any other client's, when
one is set.
"""

from pathlib import Path
from typing import Final

from fastapi import APIRouter
from starlette.responses import FileResponse

from service.api.errors import ApiError, ErrorCode

router = APIRouter(tags=["viewer"])

#: Where the page's files live (package data: see pyproject.toml).
STATIC: Final = Path(__file__).resolve().parent.parent / "static" / "viewer"
#: The files the page loads, by the name they are served under, with their types.
_MODULES: Final = ("viewer", "api", "arrays", "colors", "controls", "draw", "edits", "floors",
                   "loading", "painting", "pointer", "view")  # fmt: skip
ASSETS: Final = {
    **{f"{module}.js": "text/javascript; charset=utf-8" for module in _MODULES},
    "viewer.css": "text/css; charset=utf-8",
}
HTML: Final = "text/html; charset=utf-8"
#: Nothing from elsewhere: every script, style, image and request stays on this origin
#: (``blob:`` for the map picture the page decodes itself).
POLICY: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS: Final = {
    "Cache-Control": "no-cache",  # revalidated (ETag), so a new release shows at once
    "X-Content-Type-Options": "nosniff",
}


def _file(name: str, media_type: str, headers: dict[str, str]) -> FileResponse:
    return FileResponse(STATIC / name, media_type=media_type, headers=headers)


@router.api_route("/viewer", methods=["GET", "HEAD"], include_in_schema=False)
@router.api_route("/viewer/", methods=["GET", "HEAD"], include_in_schema=False)
async def viewer_page() -> FileResponse:
    return _file("index.html", HTML, _HEADERS | {"Content-Security-Policy": POLICY})


@router.api_route("/viewer/{name}", methods=["GET", "HEAD"], include_in_schema=False)
async def viewer_asset(name: str) -> FileResponse:
    media_type = ASSETS.get(name)
    if media_type is None:
        raise ApiError(ErrorCode.NOT_FOUND, f"the viewer has no file {name[:64]!r}")
    return _file(name, media_type, _HEADERS)
