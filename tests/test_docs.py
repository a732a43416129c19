"""The reference in docs/ keeps up with the code: every route of the OpenAPI document is
in docs/api.md, every error code with its status too, every ``GRIDPATH_*`` setting is in
docs/operations.md, and every relative link in README.md and docs/*.md leads to a file
(and heading) that exists."""

import re
from pathlib import Path
from typing import Any

import pytest

from service.api import create_app
from service.api.errors import STATUS, ErrorCode
from service.config import REPO_ROOT, Settings

DOCS = REPO_ROOT / "docs"
API = DOCS / "api.md"
OPERATIONS = DOCS / "operations.md"
PAGES = [REPO_ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")

FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def openapi_operations(tmp_path: Path) -> list[tuple[str, str]]:
    """(METHOD, path template) of every operation in the OpenAPI document. The app is
    only built, never started: no store opens, no kernel compiles."""
    document: dict[str, Any] = create_app(Settings(data_dir=tmp_path / "data")).openapi()
    return sorted(
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
        if method in HTTP_METHODS
    )


def setting_variables() -> list[str]:
    """The environment variable of every setting: its alias if it has one, else the
    settings' prefix and the field's name in capitals."""
    prefix = str(Settings.model_config.get("env_prefix", ""))
    variables = []
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias or field.alias
        variables.append(str(alias) if isinstance(alias, str) else f"{prefix}{name}".upper())
    return variables


def without_code(text: str) -> str:
    """Markdown with fenced blocks and inline code taken out (links there are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: the text as rendered (no backticks, a link's text
    only), lower case, punctuation other than '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page, repeated headings numbered as GitHub does."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for match in HEADING.finditer(FENCE.sub("", page.read_text())):
        base = anchor(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def test_every_openapi_route_is_in_the_api_reference(tmp_path: Path) -> None:
    text = API.read_text()
    missing = [
        f"{method} {path}"
        for method, path in openapi_operations(tmp_path)
        if not re.search(re.escape(f"{method} {path}") + r"(?![\w/{}.-])", text)
    ]
    assert not missing, f"routes of the OpenAPI document missing from docs/api.md: {missing}"


def test_every_error_code_is_in_the_api_reference_with_its_status() -> None:
    text = API.read_text()
    missing = [
        f"{code.value} ({STATUS[code]})"
        for code in ErrorCode
        if f"| `{code.value}` | {STATUS[code]} |" not in text
    ]
    assert not missing, f"error codes missing from docs/api.md's error table: {missing}"


def test_every_setting_is_in_the_operations_reference() -> None:
    text = OPERATIONS.read_text()
    missing = [name for name in setting_variables() if f"| `{name}` |" not in text]
    assert not missing, f"settings missing from docs/operations.md's settings table: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.relative_to(REPO_ROOT).as_posix())
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    broken = []
    for target in LINK.findall(without_code(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # https:, mailto: and the like
        path, _, fragment = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists():
            broken.append(f"{target} (no file {path})")
        elif fragment and destination.suffix == ".md" and fragment not in anchors(destination):
            broken.append(f"{target} (no heading #{fragment} in {destination.name})")
    where = page.relative_to(REPO_ROOT)
    assert not broken, f"broken relative links in {where}: {broken}"


def test_github_anchors() -> None:
    assert anchor("`POST /v1/maps/{map_id}/path`") == "post-v1mapsmap_idpath"
    assert anchor("Limits: what one client can cost the others") == (
        "limits-what-one-client-can-cost-the-others"
    )
    assert anchor("`auto` against the faster of A* and JPS") == (
        "auto-against-the-faster-of-a-and-jps"
    )
