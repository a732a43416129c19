"""Spare tables: an older revision's JPS+ and landmark tables, kept to be repaired
in place for a later revision instead of copying the current ones.

A repair that copied the table it starts from (17 MB of JPS+ table and 67 MB of
landmark distances on a 1024x1024 map, at every edit) and lowered the copy would
slow the queries answered meanwhile by its copies more than by the repair
(``engine.copies``). Tables come in pairs instead, as a double buffer: the one the
current revision reads, and a *spare*, the one it replaced, which a later repair
brings up to date where it lies, given every cell changed since its revision (the
editor keeps those: ``MapEditor``). The spare lives in the map cache, counted in
its bytes (``MapCache.keep_spare``).

A spare may be written only when nothing reads it. Everything that reads a table
holds a reference to its arrays: a query holds its revision's ``GridMap``, whose
kernel view and table objects hold them, and a kernel's caller holds its
arguments. So the arrays' reference counts are the reader counts, kept by Python
itself: a spare whose arrays no one but the spare references is unread (the
``unread`` methods), and stays so, since the spare was taken out of the cache and
nothing else can reach it. A spare still read is not waited for: the repair
copies the current tables instead, and the spare is let go.

(Arrays that are views of another, such as tables read back from a file, count
references on the view; no reader holds a further view of them today.)
"""

import sys
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from service.engine import LandmarkTables
from service.engine.landmarks import LandmarkTable

#: The kind of a spare, as ``MapCache.keep_spare`` files it (the landmark tables'
#: kind is the builder's ``LANDMARKS``).
JUMPS = "jumps"


def holders(value: object) -> int:
    """References to ``value`` besides the ones this call makes (a caller's local
    variable holding ``value`` counts)."""
    return sys.getrefcount(value) - _CALL_REFERENCES


_CALL_REFERENCES = 0
#: What a call ``holders(<expression>)`` adds itself, measured on this interpreter
#: (reference counting details differ between Python versions).
_CALL_REFERENCES = holders(object())


@dataclass(frozen=True, slots=True)
class JumpSpare:
    """A JPS+ table exact for ``revision``, unattached."""

    table: npt.NDArray[np.int16]
    revision: int

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)

    def unread(self) -> bool:
        """Whether only this spare references its table (see the module docstring)."""
        return holders(self.table) == 1


@dataclass(frozen=True, slots=True)
class LandmarkSpare:
    """Landmark tables admissible for ``revision``, taken apart so that the arrays
    are referenced once each by the spare and by nothing else when unread (any
    ``LandmarkTable`` still alive, in a revision a query holds, references them)."""

    landmarks: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]
    from_tables: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]
    #: None where a table is symmetric (distances to a landmark are those from it).
    to_tables: tuple[npt.NDArray[np.float32] | None, npt.NDArray[np.float32] | None]
    margins: tuple[float, float]
    build_seconds: float
    revision: int

    @classmethod
    def of(cls, tables: LandmarkTables) -> "LandmarkSpare":
        both = (tables.four, tables.eight)
        return cls(
            landmarks=(both[0].landmarks, both[1].landmarks),
            from_tables=(both[0].from_table, both[1].from_table),
            to_tables=tuple(None if t.symmetric else t.to_table for t in both),  # type: ignore[arg-type]
            margins=(both[0].margin, both[1].margin),
            build_seconds=tables.build_seconds,
            revision=tables.revision,
        )

    @property
    def nbytes(self) -> int:
        arrays = (*self.landmarks, *self.from_tables, *self.to_tables)
        return sum(int(a.nbytes) for a in arrays if a is not None)

    def unread(self) -> bool:
        """Whether only this spare references its distance arrays."""
        return (
            holders(self.from_tables[0]) == 1
            and holders(self.from_tables[1]) == 1
            and (self.to_tables[0] is None or holders(self.to_tables[0]) == 1)
            and (self.to_tables[1] is None or holders(self.to_tables[1]) == 1)
        )

    def tables(self) -> LandmarkTables:
        """The tables again (which reference the arrays: check :meth:`unread` first)."""
        four, eight = (self._table(i) for i in (0, 1))
        return LandmarkTables(four, eight, self.build_seconds, self.revision)

    def _table(self, i: int) -> LandmarkTable:
        from_table, to_table = self.from_tables[i], self.to_tables[i]
        to_table = from_table if to_table is None else to_table
        return LandmarkTable(self.landmarks[i], from_table, to_table, self.margins[i])

    def fits(self, tables: LandmarkTables) -> bool:
        """Whether these arrays could hold ``tables`` (same shapes and symmetry)."""
        return all(
            self.from_tables[i].shape == t.from_table.shape
            and (self.to_tables[i] is None) == t.symmetric
            for i, t in enumerate((tables.four, tables.eight))
        )
