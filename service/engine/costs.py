"""Cell costs as the engine keeps them: float32, 0 for a wall, positive and finite
otherwise, at least float32's least normal value."""

from typing import Final

import numpy as np
import numpy.typing as npt

from service.engine.errors import InvalidMapError

FLOAT32_MAX: Final = float(np.finfo(np.float32).max)
FLOAT32_TINY: Final = float(np.finfo(np.float32).tiny)  # the least normal float32


def out_of_range(product: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Where a positive cost computed in float64 (a base cost times a multiplier) is
    no float32 cost: past its largest value, or below its least normal one."""
    mask: npt.NDArray[np.bool_] = (product > 0) & (
        (product > FLOAT32_MAX) | (product < FLOAT32_TINY)
    )
    return mask


def positive_zeros(costs: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``costs`` with every ``-0.0`` made ``+0.0``, in place (IEEE 754: -0.0 + 0.0 is
    +0.0), for costs entering the service: -0.0 is blocked like 0.0, but would come
    back as ``-0.0`` from every route that sends costs, and in the edit logs."""
    costs += np.float32(0.0)
    return costs


def checked_costs(costs: npt.ArrayLike, name: str = "costs") -> npt.NDArray[np.float32]:
    """``costs`` as a new (height, width) float32 array, validated.

    Raises:
        InvalidMapError: not 2-D numeric, empty, or a cost that is NaN, negative,
            infinite or not representable as a positive float32 (the message names
            ``name`` and the first offending cell in row-major order).
    """
    try:
        values = np.asarray(costs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidMapError(f"{name} must be a 2-D array of numbers: {exc}") from None
    if values.ndim != 2:
        raise InvalidMapError(f"{name} must be 2-D (rows of numbers), got {values.ndim}-D")
    if values.size == 0:
        raise InvalidMapError(f"{name} must not be empty, got shape {values.shape}")
    with np.errstate(over="ignore"):  # too-large values become inf, rejected below
        narrowed = values.astype(np.float32)
    bad = ~np.isfinite(values) | (values < 0) | np.isinf(narrowed)
    bad |= (values > 0) & (values < FLOAT32_TINY)  # subnormal, or 0 once narrowed
    if bad.any():
        y, x = (int(i) for i in np.argwhere(bad)[0])
        cost = "cost" if name == "costs" else f"{name} cost"
        raise InvalidMapError(
            f"{cost} at (x={x}, y={y}) is {float(values[y, x])!r}; costs must be 0 (blocked) "
            f"or positive and finite, at least {FLOAT32_TINY:.3g} and at most {FLOAT32_MAX:.3g}"
        )
    return positive_zeros(narrowed)
