"""The ``profile`` of a request, bound to the map it runs on (no HTTP here).

A request names a profile (``"profile": "tank"``, one of the map's named profiles),
gives one inline (``"profile": {"multipliers": {...}, "exclude": [...]}``), or
names none (the map's default). Which one is a request's alone (:class:`ProfileRef`,
hashable: a key of the answer cache); what it means is the map's, at the revision
the query runs on (:func:`bind`), so that a named profile put or deleted by an edit
counts from the next revision, as edits do.
"""

from typing import Any, NamedTuple

from service.api.errors import ApiError, ErrorCode
from service.api.schemas import ProfileSpec
from service.engine import GridMap, Profile


class InlineProfile(NamedTuple):
    """A profile given in a request, hashable: ``(class name, multiplier)`` pairs in
    the request's order, and the class names it excludes."""

    multipliers: tuple[tuple[str, float], ...] = ()
    exclude: tuple[str, ...] = ()

    def spec(self) -> dict[str, Any]:
        """The profile as ``Profile.of`` reads it."""
        return {"multipliers": dict(self.multipliers), "exclude": list(self.exclude)}


#: A request's profile: a named profile's name, an inline one, or None (the default).
ProfileRef = str | InlineProfile | None


def profile_ref(value: str | ProfileSpec | None) -> ProfileRef:
    """The ``profile`` field of a request (the schema checked its form)."""
    if value is None or isinstance(value, str):
        return value
    return InlineProfile(tuple((value.multipliers or {}).items()), tuple(value.exclude or ()))


def profile_used(ref: ProfileRef) -> str:
    """What an answer's ``profile_used`` says of ``ref``: the name, ``"inline"`` or
    ``"default"``."""
    if ref is None:
        return "default"
    return "inline" if isinstance(ref, InlineProfile) else ref


def bind(grid: GridMap, ref: ProfileRef) -> Profile | None:
    """The profile ``ref`` means on ``grid``; None: the map's default.

    Raises:
        ApiError: ProfileNotFound, a name the map does not hold.
        InvalidQueryError: an inline profile the map's classes refuse (an unknown
            class name, a multiplier out of range).
    """
    if ref is None:
        return None
    terrain = grid.terrain
    if isinstance(ref, InlineProfile):
        names = () if terrain is None else terrain.names
        return Profile.of(ref.spec(), names)
    profile = None if terrain is None else terrain.named(ref)
    if profile is None:
        held = ", ".join(name for name, _ in terrain.profiles) if terrain else ""
        raise ApiError(ErrorCode.PROFILE_NOT_FOUND,
                       f"this map has no profile named {ref!r} (its profiles: "
                       f"{held or 'none'}); PUT /v1/maps/{{map_id}}/profiles/{ref} "
                       "makes one")  # fmt: skip
    return profile
