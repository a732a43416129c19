"""The README's quick tour, run as written (but for the port) against a real server
started on a fresh data dir: a stranger can copy and paste it from a fresh clone."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.config import REPO_ROOT
from tests.server import running_server

README = REPO_ROOT / "README.md"


def quick_tour() -> str:
    """The first ``sh`` block after the "Quick tour" heading."""
    text = README.read_text()
    section = text[text.index("## Quick tour") :]
    block = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert block is not None, "no sh block in the quick tour"
    return block.group(1)


def answers(output: str) -> list[dict[str, object]]:
    """Every JSON document the tour printed, in order."""
    decoder = json.JSONDecoder()
    found, at = [], 0
    while (start := output.find("{", at)) >= 0:
        value, at = decoder.raw_decode(output, start)
        found.append(value)
    return found


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_quick_tour_works_from_a_fresh_clone(tmp_path: Path) -> None:
    script = quick_tour()
    assert "../shared" not in script  # nothing outside the clone
    with running_server(tmp_path / "data") as client:
        address = f"127.0.0.1:{client.base_url.port}"
        command = ["bash", "-euo", "pipefail", "-c", script.replace("127.0.0.1:8000", address)]
        run = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    metadata, single, batch, boat = answers(run.stdout)
    assert metadata["name"] == "rooms"
    assert metadata["health"] == {"status": "ok", "reason": None}
    assert (single["status"], single["algorithm_used"]) == ("found", "jps")
    documented = re.search(r'"cost":([0-9.]+)', script)
    assert documented is not None
    assert single["cost"] == float(documented.group(1))  # the figure the README shows
    shown_path = re.search(r'"path":(\[\[[-0-9,\[\]]*\]\])', script)
    assert shown_path is not None
    assert single["path"] == json.loads(shown_path.group(1))  # and the path (it had drifted)
    results = batch["results"]
    assert isinstance(results, list)
    assert [r.get("status", r.get("code")) for r in results] == ["found", "partial", "NotWalkable"]
    assert results[0]["cost"] == single["cost"]
    assert (boat["status"], boat["profile_used"], boat["cost"]) == ("found", "boat", 4.0)
    assert '"cost":4.0,"path":[[2,0],[2,2],[0,2]]' in script  # what the README shows
    assert boat["path"] == [[2, 0], [2, 2], [0, 2]]
