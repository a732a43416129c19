"""The OpenAPI document (every reference resolves, only the service's own error shape,
the closed set of codes as an enum) and the docs pages, served without a CDN."""

import re
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient

from service.api.errors import ErrorCode
from service.config import REPO_ROOT
from service.engine.clusters import DEFAULT_CLUSTER_SIZE


def references(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref":
                yield value
            else:
                yield from references(value)
    elif isinstance(node, list):
        for item in node:
            yield from references(item)


def resolve(document: dict[str, Any], reference: str) -> Any:
    assert reference.startswith("#/"), reference
    node: Any = document
    for part in reference[2:].split("/"):
        node = node[part]
    return node


def test_every_schema_reference_resolves(
    client: TestClient,
) -> None:
    """The batch's defaults referred to a schema that did not exist."""
    document = client.get("/openapi.json").json()
    found = set(references(document))
    assert "#/$defs/PathOptions" not in found
    for reference in found:
        resolve(document, reference)  # KeyError if it dangles
    batch = document["paths"]["/v1/maps/{map_id}/paths"]["post"]["requestBody"]
    body = resolve(document, batch["content"]["application/json"]["schema"]["$ref"])
    defaults = body["properties"]["defaults"]["anyOf"][0]["$ref"]
    assert set(resolve(document, defaults)["properties"]) >= {
        "heuristic", "diagonal", "weight", "max_expansions", "format", "algorithm"}  # fmt: skip


def test_every_error_answer_is_declared_as_the_error_body(client: TestClient) -> None:
    """The framework's 422 shape was declared but never sent."""
    document = client.get("/openapi.json").json()
    assert "HTTPValidationError" not in str(document)
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            for status, answer in operation["responses"].items():
                if status.startswith(("4", "5")):
                    schema = answer["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorBody"}, (method, path)


def test_error_codes_are_an_enum_and_in_the_api_reference(client: TestClient) -> None:
    """The error codes were prose only."""
    document = client.get("/openapi.json").json()
    codes = document["components"]["schemas"]["ErrorCode"]
    assert codes["type"] == "string"
    assert codes["enum"] == [code.value for code in ErrorCode]
    api = (REPO_ROOT / "docs" / "api.md").read_text()
    for code in ErrorCode:  # docs/api.md's table lists every code, too
        assert f"| `{code.value}` |" in api, code


def test_metrics_is_declared_and_served_as_plain_text(client: TestClient) -> None:
    """/metrics declared no content type."""
    document = client.get("/openapi.json").json()
    answer = document["paths"]["/metrics"]["get"]["responses"]["200"]
    assert list(answer["content"]) == ["text/plain"]
    assert client.get("/metrics").headers["content-type"].startswith("text/plain")


def test_the_cluster_size_default_is_described_one_way(client: TestClient) -> None:
    """The cluster size's default was described two ways."""
    document = client.get("/openapi.json").json()
    upload = document["paths"]["/v1/maps"]["post"]
    parameter = next(p for p in upload["parameters"] if p["name"] == "cluster_size")
    field = document["components"]["schemas"]["MapCreate"]["properties"]["cluster_size"]
    said = f"default: {DEFAULT_CLUSTER_SIZE} (GRIDPATH_CLUSTER_SIZE)"
    assert said in parameter["description"]
    assert said in field["description"]
    operations = (REPO_ROOT / "docs" / "operations.md").read_text()
    assert re.search(rf"`GRIDPATH_CLUSTER_SIZE` \| unset \| .*unset: {DEFAULT_CLUSTER_SIZE}\b",
                     operations)  # fmt: skip


def test_the_docs_pages_load_nothing_from_elsewhere(client: TestClient) -> None:
    """The docs pages loaded Swagger UI from a CDN."""
    for page in ("/docs", "/redoc"):
        html = client.get(page)
        assert html.status_code == 200
        assert "text/html" in html.headers["content-type"]
        assert not re.search(r"https?://", html.text), page  # nothing from elsewhere
        for asset in re.findall(r"""(?:src|href)=["']?(/[^"' >]+)""", html.text):
            served = client.get(asset)
            assert served.status_code == 200, asset
            assert len(served.content) > 0
    script = client.get("/static-docs/swagger-ui-bundle.js")
    assert "javascript" in script.headers["content-type"]
    assert client.get("/static-docs/swagger-ui.css").headers["content-type"].startswith(
        "text/css")  # fmt: skip


def test_no_description_holds_markup_a_renderer_would_swallow(client: TestClient) -> None:
    """Swagger rendered "'Authorization: Bearer <key>' header" as "Bearer ' header":
    angle brackets outside code spans are HTML tags to a Markdown renderer."""
    text = client.get("/openapi.json").text
    for description in re.findall(r'"description":"((?:[^"\\]|\\.)*)"', text):
        outside_code = re.sub(r"`[^`]*`", "", description.replace("\\n", "\n"))
        assert not re.search(r"<[A-Za-z][^>]*>", outside_code), description[:200]
