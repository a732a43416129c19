"""The README's quick tour, run as written (but for the port) against a real server
started on a fresh data dir: a stranger can copy and paste it from a fresh clone."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from service.config import REPO_ROOT
from tests.server import COLD_START_SECONDS, running_server, server_log

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


def run_tour(address: str, *, timeout: float) -> subprocess.CompletedProcess[str]:
    """The tour as written, against the server at ``address`` instead of port 8000."""
    script = quick_tour().replace("127.0.0.1:8000", address)
    command = ["bash", "-euo", "pipefail", "-c", script]
    return subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=timeout)  # fmt: skip


def check_answers(output: str) -> None:
    """What the tour printed is what the README shows."""
    script = quick_tour()
    metadata, single, batch, boat = answers(output)
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


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_quick_tour_works_from_a_fresh_clone(tmp_path: Path) -> None:
    assert "../shared" not in quick_tour()  # nothing outside the clone
    with running_server(tmp_path / "data") as client:
        run = run_tour(f"127.0.0.1:{client.base_url.port}", timeout=120)
    assert run.returncode == 0, run.stderr
    check_answers(run.stdout)


#: A step of the warm-up as the service logs it while a child process compiles.
COMPILE_STEP = re.compile(r"compiling the kernels \(\d+ s\): (.+?), step (\d+) of (\d+): ")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_quick_tour_works_while_the_first_start_compiles(tmp_path: Path) -> None:
    """Pasted right after a first ``make run``, the tour's upload got 503 NotReady while
    the kernels compiled and its one-liner failed with KeyError 'id'."""
    # An empty kernel cache, and make run's log level, under which the steps show.
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "numba"), "GRIDPATH_LOG_LEVEL": "info"}
    data_dir = tmp_path / "data"
    with running_server(data_dir, env, wait_ready=False) as client:
        try:
            run = run_tour(f"127.0.0.1:{client.base_url.port}", timeout=COLD_START_SECONDS)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the tour never finished; the server logged:\n"
                        f"{server_log(client, data_dir)}")  # fmt: skip
        log = server_log(client, data_dir)
    assert run.returncode == 0, f"{run.stderr}\nthe server logged:\n{log}"
    check_answers(run.stdout)
    # The tour met the compile (its wait was answered not ready), rather than a server
    # that was ready by the time it started.
    assert '"route":"/readyz","method":"GET","status":503' in log, log
    # Each part of the warm-up was logged step by step while it compiled.
    steps: dict[str, set[int]] = {}
    totals: dict[str, int] = {}
    for part, step, total in COMPILE_STEP.findall(log):
        steps.setdefault(part, set()).add(int(step))
        totals[part] = int(total)
    assert {"search kernels", "table kernels"} <= steps.keys(), log
    for part, total in totals.items():
        assert steps[part] == set(range(1, total + 1)), (part, log)
