"""``GET /viewer``: the page and its files, served by the service, nothing from elsewhere.

The page itself is driven in a real browser by ``tests/viewer``."""

import fnmatch
import re
import tomllib

from fastapi.testclient import TestClient

from service.api.routes.viewer import ASSETS, STATIC
from service.config import REPO_ROOT

_LOCAL_ASSET = re.compile(r"""(?:src|href)=["']([^"']+)["']""")


def test_the_page_is_html_that_loads_only_the_services_own_files(client: TestClient) -> None:
    page = client.get("/viewer")
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert "script-src 'self'" in policy
    assert "connect-src 'self'" in policy
    assert not re.search(r"https?://", page.text)
    assert not re.search(r"<script>|<style>|\son\w+=", page.text)  # no inline code (the policy)
    assets = _LOCAL_ASSET.findall(page.text)
    assert {"/viewer/viewer.js", "/viewer/viewer.css"} <= set(assets)
    assert "data:," in assets  # an empty icon: no request for /favicon.ico
    for asset in (asset for asset in assets if asset != "data:,"):
        assert asset.startswith("/"), asset
        assert client.get(asset).status_code == 200, asset


def test_each_file_is_served_with_its_type(client: TestClient) -> None:
    files = {path.name for path in STATIC.iterdir()} - {"index.html"}
    types = {name: "text/css" if name.endswith(".css") else "text/javascript" for name in files}
    assert set(ASSETS) == set(types)
    for name, kind in types.items():
        answer = client.get(f"/viewer/{name}")
        assert answer.status_code == 200, name
        assert answer.headers["content-type"] == f"{kind}; charset=utf-8"
        assert answer.headers["x-content-type-options"] == "nosniff"
        assert answer.content == (STATIC / name).read_bytes()
        assert not re.search(r"https?://", answer.text), name  # no CDN, no web fonts


def test_every_module_a_script_imports_is_served(client: TestClient) -> None:
    """A module left out of the served files stops the whole page from loading."""
    for name in (name for name in ASSETS if name.endswith(".js")):
        for imported in re.findall(r"""from\s+["']\./([\w.]+)["']""", (STATIC / name).read_text()):
            assert imported in ASSETS, (name, imported)
            assert client.get(f"/viewer/{imported}").status_code == 200


def test_head_answers_like_get_without_a_body(client: TestClient) -> None:
    for url in ("/viewer", "/viewer/", "/viewer/viewer.js", "/viewer/viewer.css"):
        got, head = client.get(url), client.head(url)
        assert head.status_code == 200, url
        assert head.content == b""
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-length"] == str(len(got.content))


def test_other_names_are_not_found_and_the_page_is_not_an_api_operation(
    client: TestClient,
) -> None:
    for url in ("/viewer/index.html", "/viewer/nope.js", "/viewer/..%2Fviewer.py"):
        answer = client.get(url)
        assert answer.status_code == 404, url
        assert answer.json()["code"] == "NotFound"
    assert client.post("/viewer").json()["code"] == "MethodNotAllowed"
    paths = client.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if path.startswith("/viewer")]


def test_the_files_ship_as_package_data() -> None:
    """The wheel (and so the Docker image, which pip installs it) holds the files."""
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["service"]
    package = REPO_ROOT / "service"
    for name in ("index.html", *ASSETS):
        path = (STATIC / name).relative_to(package).as_posix()
        assert any(fnmatch.fnmatch(path, pattern) for pattern in patterns), path
