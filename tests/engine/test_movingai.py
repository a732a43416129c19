"""Moving AI ``.map`` and ``.map.scen`` parsing."""

import tracemalloc

import pytest

from service.engine import InvalidMapError, MapTooBigError
from service.engine.movingai import parse_map, parse_scenarios

MAP = "type octile\nheight 2\nwidth 3\nmap\n.@T\nGS.\n"


def test_parse_map_returns_the_rows() -> None:
    assert parse_map(MAP) == [".@T", "GS."]
    assert parse_map(MAP.replace("\n", "\r\n") + "\n\n") == [".@T", "GS."]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"no 'map' line"),
        ("type octile\nheight 2\nwidth 3\n", r"no 'map' line"),
        ("type grid\nheight 1\nwidth 1\nmap\n.\n", r"type must be 'octile', got 'grid'"),
        ("type octile\nheight x\nwidth 1\nmap\n.\n", r"'height' must be a positive integer"),
        (
            "type octile\nwidth 1\nmap\n.\n",
            r"'height' must be a positive integer of at most 9 digits, got None",
        ),
        ("type octile\nheight 2\nwidth 1\nmap\n.\n", r"header says height 2, but 1 rows follow"),
        ("type octile\nheight 1\nwidth 2\nmap\n...\n", r"row y=0 has 3 characters.*width 2"),
        ("hello world\n", r"unexpected header line 1"),
    ],
)
def test_parse_map_rejects_malformed_files(text: str, message: str) -> None:
    with pytest.raises(InvalidMapError, match=message):
        parse_map(text)


def test_parse_scenarios() -> None:
    text = "version 1\n0\tmaps/dao/arena.map\t49\t49\t1\t11\t1\t12\t1.00000000\n\n"
    (row,) = parse_scenarios(text)
    assert row.map_name == "arena.map"
    assert (row.start, row.goal, row.optimal_length) == ((1, 11), (1, 12), 1.0)


def test_parse_scenarios_rejects_short_rows() -> None:
    with pytest.raises(ValueError, match="scenario line 1: expected 9 columns, got 3"):
        parse_scenarios("0 a 1\n")


def test_parse_map_checks_the_declared_size_before_the_rows() -> None:
    huge = "type octile\nheight 100000\nwidth 100000\nmap\n.\n"
    with pytest.raises(MapTooBigError, match=r"100000x100000 = 10000000000 cells exceeds .* 1000"):
        parse_map(huge, max_cells=1000)
    assert parse_map(MAP, max_cells=6) == [".@T", "GS."]


def test_a_body_of_many_short_lines_is_refused_without_splitting_it() -> None:
    # Every line became a string before the header was read: 64 MiB of "ab\\n" held the
    # interpreter lock for seconds and took gigabytes, to be refused all the same.
    text = "type octile\nheight 1\nwidth 1\nmap\n.\n" + "ab\n" * 2_000_000
    tracemalloc.start()
    try:
        with pytest.raises(InvalidMapError, match="header says height 1, but 2000001 rows"):
            parse_map(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * len(text)  # copies of the text, not a string a line (20 times it)
    assert parse_map("type octile\r\nheight 2\r\nwidth 2\r\nmap\r\n..\r\n.@\r\n\r\n\n") == [
        "..", ".@"]  # fmt: skip


def test_a_header_of_blank_lines_is_refused_within_its_first_lines() -> None:
    # 8 MiB of blank lines before the header took seconds of a search thread (a 128 MiB
    # upload: far longer) to be refused all the same.
    with pytest.raises(InvalidMapError, match=r"^Moving AI map: no 'map' line within the "
                       r"first 64 lines$"):  # fmt: skip
        parse_map("\n" * (8 << 20) + MAP)
    with pytest.raises(InvalidMapError, match=r"^Moving AI map: header line 2 is longer than "
                       r"256 characters$"):  # fmt: skip
        parse_map("type octile\n" + " " * (8 << 20) + "height 2\n")
    assert parse_map("\n" * 50 + MAP) == [".@T", "GS."]  # a few blank lines are fine
