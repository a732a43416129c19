"""docs/cookbook.md's recipes, each run as written (but for the port) against the real
service from the repository's root."""

import ast

from service.config import REPO_ROOT
from tests.client.test_readme import python_block, run_example

COOKBOOK = REPO_ROOT / "docs" / "cookbook.md"


def test_the_tick_loop_moves_units_along_their_routes(server_url: str) -> None:
    (line,) = run_example(python_block("## An RTS tick loop", COOKBOOK), server_url)
    units = ast.literal_eval(line)
    assert units["scout"] != (2, 2)
    assert units["archer"] != (20, 12)


def test_a_closed_door_blocks_and_its_revision_is_read(server_url: str) -> None:
    lines = run_example(python_block("## Doors", COOKBOOK), server_url)
    assert lines == ["found", "no_path"]


def test_a_walled_in_unit_snaps_out(server_url: str) -> None:
    refused, out = run_example(python_block("## A unit walled in by an edit", COOKBOOK),
                               server_url)  # fmt: skip
    assert refused == "refused: NotWalkable"
    assert out == "found {'start': (3, 0)}"


def test_a_held_path_is_checked_and_spliced(server_url: str) -> None:
    heard, checked, mended = run_example(python_block("## Held paths after edits", COOKBOOK),
                                         server_url)  # fmt: skip
    assert heard.endswith(" [(6, 2, 1, 3)]")
    assert checked.startswith("False ")
    assert mended.startswith("spliced ")


def test_a_long_search_goes_on_over_ticks(server_url: str) -> None:
    (line,) = run_example(python_block("## A long search over several ticks", COOKBOOK),
                          server_url)  # fmt: skip
    status, ticks = line.split()
    assert status == "found"
    assert int(ticks) > 2
