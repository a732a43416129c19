"""The client's examples, in its README and the repository's, run as written (but for
the port) against the real service from the repository's root."""

import ast
import re
import subprocess
import sys
from pathlib import Path

from service.config import REPO_ROOT

README = REPO_ROOT / "clients" / "python" / "README.md"
FRONT_DOOR = REPO_ROOT / "README.md"


def python_block(heading: str, readme: Path = README) -> str:
    """The first ``python`` block after ``heading`` in ``readme``."""
    text = readme.read_text()
    block = re.search(r"```python\n(.*?)```", text[text.index(heading) :], re.DOTALL)
    assert block is not None, f"no python block after {heading!r}"
    return block.group(1)


def run_example(code: str, server_url: str) -> list[str]:
    script = code.replace("http://127.0.0.1:8000", server_url)
    command = [sys.executable, "-c", script]
    done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_the_game_loop_runs(server_url: str) -> None:
    lines = run_example(python_block("## A game loop"), server_url)
    assert len(lines) == 8
    assert lines[-1].startswith("7 ")
    units = ast.literal_eval(lines[-1][2:])
    assert units["knight"] == (14, 2)  # ordered onto a wall: NotWalkable, order dropped
    assert units["scout"] != (2, 2)
    assert units["archer"] != (20, 12)  # 8 cells further


def test_the_usage_example_runs(server_url: str) -> None:
    found, reached = run_example(python_block("## Usage"), server_url)
    assert found.startswith("found 30.899494936611667 jps")
    reached_cell = ast.literal_eval(reached)
    assert 20 <= reached_cell[0] < 24
    assert 8 <= reached_cell[1] < 12


def test_the_profiles_example_runs(server_url: str) -> None:
    tank, ford, flooded, cut_off, names = run_example(
        python_block("## Terrain classes and profiles"), server_url
    )
    assert tank.startswith("found tank ")
    assert float(tank.split()[-1]) > 7.0  # round by the ford, not over the water
    assert (ford, flooded, cut_off) == ("no_path", "found", "no_path")
    assert ast.literal_eval(names) == ["tank"]


def test_the_front_doors_game_loop_runs(server_url: str) -> None:
    lines = run_example(python_block("## Python client", FRONT_DOOR), server_url)
    units = ast.literal_eval(lines[-1])
    assert units["knight"] == (14, 2)  # ordered onto a wall: NotWalkable, order cancelled
    assert units["scout"] != (2, 2)
