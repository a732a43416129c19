"""Helpers shared by the benchmark scripts: tables (text and markdown), machine facts."""

import argparse
import os
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Table:
    """A titled table of preformatted cells; the first column is left-aligned."""

    title: str
    columns: tuple[str, ...]
    rows: Sequence[tuple[str, ...]]
    note: str = ""


def render_text(table: Table) -> str:
    """Aligned plain-text form."""
    widths = [
        max([len(col), *(len(row[i]) for row in table.rows)]) for i, col in enumerate(table.columns)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    body = [line(table.columns), line(["-" * w for w in widths]), *map(line, table.rows)]
    return "\n".join([table.title, *body, *([table.note] if table.note else [])])


def render_markdown(table: Table) -> str:
    """GitHub-flavoured markdown form."""
    align = ["---", *("---:" for _ in table.columns[1:])]
    rows = [table.columns, tuple(align), *table.rows]
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([f"**{table.title}**", "", *lines, *(["", table.note] if table.note else [])])


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def nproc() -> int:
    """CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def positive(text: str) -> int:
    """An argparse type: an integer >= 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def report(tables: Sequence[Table], text: str | None, markdown: bool) -> None:
    """Print the tables and the summary ``text``, then, with ``markdown``, their
    markdown forms (the summary in a ``text`` code block) for docs/benchmarks.md."""
    for table in tables:
        print(render_text(table), end="\n\n")
    if text is not None:
        print(text)
    if markdown:
        print("\n-- markdown --\n")
        for table in tables:
            print(render_markdown(table), end="\n\n")
        if text is not None:
            print("```text\n" + text + "\n```")
