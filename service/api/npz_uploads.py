"""``.npz`` map uploads: a map with terrain classes as numpy arrays.

An archive of ``classes`` (integers 0..63, 2-D (height, width) or 3-D (layers,
height, width)), ``class_names`` (1-D strings), and optionally ``costs`` (numbers of
the classes' shape, the base costs; 1 on every cell without them) and
``default_profile`` (a 0-D string: the profile's JSON). Every member's header is read
and checked (shape, dtype, cells against the map limit) before its data: a member's
size is what its header says, not what a compressed archive would inflate to.
"""

import io
import zipfile
from collections.abc import Callable
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import orjson

from service.api.errors import ApiError, ErrorCode
from service.config import Settings
from service.engine import MAX_CLASSES, UNIFORM, GridMap, Profile, Terrain
from service.engine.layers import Layers

NPZ: Final = "application/x-npz"
#: ``uploads.check_floors``: (shape, settings, what) to the floors of a grid of that
#: shape, InvalidValue past the layer limit, TooBig past the map cell limit.
FloorCheck = Callable[[tuple[int, ...], Settings, str], Layers]
_MEMBERS: Final = ("costs", "classes", "class_names", "default_profile")
#: The longest JSON of a default profile (its names and numbers).
_MAX_PROFILE_CHARS: Final = 1 << 16


def terrain_from_npz(body: bytes, settings: Settings, check_floors: FloorCheck
                     ) -> tuple[GridMap, Layers]:  # fmt: skip
    """The map of an ``.npz`` upload (see the module), and its floors.

    Raises:
        ApiError: InvalidValue (not an archive, a missing, unknown or malformed
            member, a bad terrain), TooBig (past the map cell limit).
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(body))
    except zipfile.BadZipFile as exc:
        raise _invalid(f"body is not a valid .npz archive: {exc}") from None
    members = {name.removesuffix(".npy"): name for name in archive.namelist()}
    unknown = sorted(set(members) - set(_MEMBERS))
    if unknown:
        raise _invalid(f".npz holds {', '.join(unknown)}; it may hold only "
                       f"{', '.join(_MEMBERS)}")  # fmt: skip
    for needed in ("classes", "class_names"):
        if needed not in members:
            raise _invalid(f".npz needs a '{needed}' array")
    classes = _read(archive, members["classes"], (2, 3), "iu", settings, check_floors)
    costs = (_read(archive, members["costs"], (classes.ndim,), "biuf", settings, check_floors)
             if "costs" in members else np.ones(classes.shape, np.float32))  # fmt: skip
    if costs.shape != classes.shape:
        raise _invalid(f".npz costs have shape {costs.shape}, classes {classes.shape}: they "
                       "must match")  # fmt: skip
    names = _read(archive, members["class_names"], (1,), "U", settings, check_floors)
    if names.size > MAX_CLASSES:
        raise _invalid(f".npz class_names has {names.size} names; at most {MAX_CLASSES}")
    default = UNIFORM
    if "default_profile" in members:
        text = _read(archive, members["default_profile"], (0,), "U", settings, check_floors)
        default = _profile(str(text), [str(n) for n in names])
    layers = check_floors(classes.shape, settings, ".npz classes")
    if classes.ndim == 3:
        classes, costs = layers.stack(classes), layers.stack(costs)
    terrain = Terrain.of(base=costs, classes=classes, names=[str(n) for n in names],
                         default=default)  # fmt: skip
    return GridMap.from_terrain(terrain), layers


def _read(archive: zipfile.ZipFile, member: str, ndims: tuple[int, ...], kinds: str,
          settings: Settings, check_floors: FloorCheck) -> npt.NDArray[Any]:  # fmt: skip
    """A member's array once its header passes: one of ``ndims`` dimensions, a dtype
    of one of ``kinds``, and for a grid no more layers and cells than the limits."""
    name = member.removesuffix(".npy")
    try:
        with archive.open(member) as stream:
            version = np.lib.format.read_magic(stream)
            read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                    else np.lib.format.read_array_header_2_0)  # fmt: skip
            shape, _, dtype = read(stream)
    except Exception:  # whatever a malformed header raises: see uploads.read_npy_header
        raise _invalid(f".npz member '{name}' is not a valid .npy array") from None
    if len(shape) not in ndims or dtype.kind not in kinds:
        dims = " or ".join(f"{n}-D" for n in ndims)
        raise _invalid(f".npz '{name}' must be {dims} of kind {kinds!r}, got shape "
                       f"{shape} of dtype {dtype}")  # fmt: skip
    if len(shape) >= 2:
        check_floors(shape, settings, f".npz '{name}'")
    elif (len(shape) == 1 and shape[0] > MAX_CLASSES) or dtype.itemsize > 4 * _MAX_PROFILE_CHARS:
        raise _invalid(f".npz '{name}' is too long ({shape} of {dtype})")
    try:
        with archive.open(member) as stream:
            array: npt.NDArray[Any] = np.lib.format.read_array(stream, allow_pickle=False)
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise _invalid(f".npz member '{name}' is unreadable: {exc}") from None
    return array


def _profile(text: str, names: list[str]) -> Profile:
    try:
        spec = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise _invalid(f".npz default_profile is not JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise _invalid(".npz default_profile must be a JSON object")
    return Profile.of(spec, names)


def _invalid(message: str) -> ApiError:
    return ApiError(ErrorCode.INVALID_VALUE, message)
