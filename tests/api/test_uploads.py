"""The binary map reader (``.npy``, the one binary upload format) under malformed and
mutated files, and costs as they enter the service."""

import io
import itertools
import random
import tracemalloc
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import numpy as np
import pytest
from fastapi.testclient import TestClient

from service.api.errors import ApiError, ErrorCode, engine_error_code
from service.api.uploads import CONTENT_TYPES, NPY, decode_map
from service.config import Settings
from service.engine import EngineError
from service.engine.layers import Layers
from tests.server import running_server

SETTINGS: Final = Settings()
#: Headers the upload answered 500 to: numpy's fallback parser (for Python 2 headers)
#: raised ``tokenize.TokenError`` on a dict or tuple left open.
UNCLOSED_HEADERS: Final = (
    "{'descr': '<f4', 'fortran_order': False, 'shape': (3, }",
    "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), ",
)
#: Bytes a flip writes into a header: the literal's syntax, digits, and a few others.
FLIP_BYTES: Final = b"{}()[],:'\" 0123456789-LeEjTFNx\\\n\x00\x7f\x80\xff"
#: Dtypes of every kind, byte order and size; only bool, integers and floats are maps.
DESCRS: Final = (
    "<f4", ">f4", "<f8", ">f8", "<f2", "|b1", "<i8", ">i2", "|u1", "|i1", "<u8", "<c8",
    ">c16", "|O", "<U2", "|S3", "|V4", "<M8[s]", "<m8[s]", [("a", "<f4"), ("b", "<i2")],
    ("<f4", (2,)), "bogus", 7, None,
)  # fmt: skip
SHAPES: Final = (
    (), (4,), (1, 1), (2, 3), (3, 2, 2), (0, 3), (3, 0), (-1, 3), (2**20, 2**20),
    (4096, 4096), (2**63, 2), (10**30, 1), (True, True), (2.0, 2), [2, 2],
)  # fmt: skip
#: Bytes a decode may hold beyond a small multiple of the body (the grid it builds):
#: far below any array a header could claim.
SLACK_BYTES: Final = 1 << 20


def npy_bytes(array: np.ndarray, version: tuple[int, int] = (1, 0)) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version)
    return buffer.getvalue()


def raw_npy(header: str | bytes, data: bytes = b"", version: tuple[int, int] = (1, 0)) -> bytes:
    """A ``.npy`` file with ``header`` as its header text, whatever it says."""
    text = header.encode("latin-1") if isinstance(header, str) else header
    length_bytes = 2 if version == (1, 0) else 4
    text += b" " * (-(8 + length_bytes + len(text) + 1) % 64) + b"\n"
    magic = b"\x93NUMPY" + bytes(version)
    return magic + len(text).to_bytes(length_bytes, "little") + text + data


def header(descr: object, shape: object, fortran_order: object = False) -> str:
    return repr({"descr": descr, "fortran_order": fortran_order, "shape": shape})


def valid_maps() -> Iterator[np.ndarray]:
    yield np.arange(1, 7, dtype="<f4").reshape(2, 3)
    yield np.array([[1, 0], [3, 1]], "<i2")
    yield np.asfortranarray(np.arange(1, 13, dtype="<f8").reshape(3, 4))
    yield np.array([[1.5, 2], [0, 4]], ">f8")
    yield np.array([[True, False], [True, True]])
    yield np.array([[7]], "<i8")
    yield np.array([[2, 0, 9]], "|u1")
    yield np.array([[0.5], [1]], "<f2")


def valid_files() -> Iterator[bytes]:
    for array, version in itertools.product(valid_maps(), ((1, 0), (2, 0), (3, 0))):
        yield npy_bytes(array, version)


def truncations() -> Iterator[bytes]:
    for body in valid_files():
        for end in range(0, len(body), 3):
            yield body[:end]


def flips(rng: random.Random, per_file: int = 12) -> Iterator[bytes]:
    """Files with one to three bytes of the magic, version, length or header changed."""
    for body in valid_files():
        start = body.index(b"{")
        for _ in range(per_file):
            mutated = bytearray(body)
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(start) if rng.random() < 0.2 else rng.randrange(start, 128)
                mutated[at] = rng.choice(FLIP_BYTES) if rng.random() < 0.8 else rng.randrange(256)
            yield bytes(mutated)


def odd_headers() -> Iterator[bytes]:
    """Every dtype of ``DESCRS`` with every shape of ``SHAPES``, in C and Fortran
    order: with the data the header asks for when that is small, else with 16 bytes."""
    for descr, shape, fortran in itertools.product(DESCRS, SHAPES, (False, True)):
        text = header(descr, shape, fortran)
        try:
            needed = int(np.prod(shape, dtype=object)) * np.dtype(descr).itemsize  # type: ignore[arg-type]
        except (TypeError, ValueError):
            needed = 16
        fits = 0 <= needed <= 4096
        yield raw_npy(text, b"\x01" * (needed if fits else 16))
        if fits and needed:
            yield raw_npy(text, b"\x01" * (needed - 1))


def malformed() -> Iterator[bytes]:
    for text in UNCLOSED_HEADERS:
        yield raw_npy(text, b"\0" * 36)
        yield raw_npy(text, b"\0" * 36, version=(2, 0))
    for text in (
        "", "{", "}", "[1, 2]", "(", "((((" * 60, "{'descr': '<f4'", "'", "{'descr': '<f4',",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)} + 1",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 2)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 2L)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}",
        "{'descr': '<f4', 'shape': (2, 2)}", "{'descr': '<f4', 'fortran_order': False, 'shape': 4}",
        "{'descr': ('<f4', (10**30,)), 'fortran_order': False, 'shape': (1, 1)}",
        "{'descr': [('a', '<f4', (2**62,))], 'fortran_order': False, 'shape': (1, 1)}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1)}" + " " * 10_000,
        "{'descr': '<f4', 'fortran_order': False, 'shape': (" + "1, " * 4000 + ")}",
        "{'descr': " + "[" * 200 + "]" * 200 + ", 'fortran_order': False, 'shape': (1, 1)}",
    ):  # fmt: skip
        yield raw_npy(text, b"\0" * 16)
    yield raw_npy(b"{'descr': '\xff\x00', 'fortran_order': False, 'shape': (1, 1)}", b"\0" * 4)
    good = header("<f4", (1, 1))
    for version in ((0, 0), (1, 1), (4, 0), (255, 255)):
        yield raw_npy(good, b"\0\0\x80\x3f", version=version)
    yield b"\x93NUMPY\x01\x00\xff\xff" + good.encode()  # a length past the end
    yield b"\x93NUMPY\x02\x00\xff\xff\xff\xff" + good.encode()
    yield b"\x93NUMPZ\x01\x00" + good.encode()


def fuzzed_files() -> list[bytes]:
    rng = random.Random(43)
    return [*truncations(), *flips(rng), *odd_headers(), *malformed()]


@pytest.fixture
def traced() -> Iterator[None]:
    """Memory traced, after a first map is built (it loads the kernels that do)."""
    decode_map(NPY, npy_bytes(np.ones((2, 2))), SETTINGS)
    tracemalloc.start()
    yield
    tracemalloc.stop()


def decoded_with_peak(body: bytes) -> tuple[int, np.ndarray | None, str | None, str]:
    """The peak bytes traced while ``decode_map`` reads ``body``, its costs (None when
    it refuses it), and the refusal's code and message."""
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    costs: np.ndarray | None = None
    code: str | None = None
    message = ""
    try:
        costs = decode_map(NPY, body, SETTINGS).grid.costs
    except ApiError as exc:
        code, message = exc.code, exc.message
    except EngineError as exc:
        code, message = engine_error_code(exc), str(exc)
    return tracemalloc.get_traced_memory()[1] - before, costs, code, message


def decoded_or_refused(body: bytes) -> np.ndarray | None:
    """The costs ``decode_map`` builds from ``body`` (None when it refuses it), with
    the peak memory of the decode held within a small multiple of the body."""
    bound = 32 * len(body) + SLACK_BYTES
    peak, costs, code, message = decoded_with_peak(body)
    if peak > bound:  # once more: tracemalloc counts every thread's allocations
        peak, costs, code, message = decoded_with_peak(body)
    assert peak <= bound, f"{peak} bytes held decoding {body[:128]!r}"
    assert code in (None, ErrorCode.INVALID_VALUE, ErrorCode.TOO_BIG), message
    assert code != ErrorCode.TOO_BIG or "GRIDPATH_MAX_MAP_CELLS" in message, message
    return costs


def numpy_reads(body: bytes) -> np.ndarray:
    """``body`` as numpy's own loader reads it: the oracle for what was accepted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        array: np.ndarray = np.load(io.BytesIO(body), allow_pickle=False)
    return array


def test_npy_and_npz_are_the_binary_forms_of_an_upload() -> None:
    """What the fuzz below covers (``.npy``; ``.npz``'s members are read by the same
    header checks first: tests/api/test_profiles.py)."""
    assert CONTENT_TYPES == ("text/plain", "application/json", NPY, "application/x-npz")


@pytest.mark.parametrize("text", UNCLOSED_HEADERS)
def test_an_unclosed_header_is_invalid_value_naming_it(text: str) -> None:
    """Such headers answered 500: numpy's tokenizer error was not caught."""
    with pytest.raises(ApiError) as refused:
        decode_map(NPY, raw_npy(text, b"\0" * 36), SETTINGS)
    assert refused.value.code == ErrorCode.INVALID_VALUE
    assert refused.value.message == (
        f"body is not a valid .npy file: cannot parse its header {text.strip()!r}"
    )


@pytest.mark.usefixtures("traced")
@pytest.mark.filterwarnings("ignore:Reading `.npy` or `.npz` file required additional")
def test_mutated_npy_files_are_read_as_numpy_reads_them_or_refused_as_invalid() -> None:
    """Truncations, byte flips, odd dtypes and shapes, declared shapes far past the
    data: each is a map numpy reads the same, or InvalidValue (TooBig for more cells
    than the limit), never another error, never an allocation the header claims."""
    files = fuzzed_files()
    assert 800 <= len(files) <= 3000  # bounded, and not trivially small
    accepted = 0
    for body in files:
        costs = decoded_or_refused(body)
        if costs is None:
            continue
        accepted += 1
        expected = numpy_reads(body)
        assert expected.ndim in (2, 3), body[:128]
        assert expected.size > 0, body[:128]
        if expected.ndim == 3:  # floors, stacked in the grid
            costs = Layers(*expected.shape).unstack(costs)
        np.testing.assert_array_equal(costs, expected.astype(np.float64).astype(np.float32))
    assert accepted >= 24  # every valid file, and the harmless mutations


def test_valid_npy_files_of_every_numeric_kind_and_order_are_read() -> None:
    for array in valid_maps():
        for version in ((1, 0), (2, 0), (3, 0)):
            costs = decode_map(NPY, npy_bytes(array, version), SETTINGS).grid.costs
            np.testing.assert_array_equal(costs, array.astype(np.float32))


def test_an_unclosed_npy_header_answers_invalid_value_from_the_server(tmp_path: Path) -> None:
    """The real server answered 500 Internal to these."""
    with running_server(tmp_path / "data") as client:
        for text in UNCLOSED_HEADERS:
            response = client.post("/v1/maps", content=raw_npy(text, b"\0" * 36),
                                   headers={"content-type": NPY})  # fmt: skip
            assert response.status_code == 400, response.text
            assert response.json() == {
                "code": "InvalidValue",
                "message": "body is not a valid .npy file: cannot parse its header "
                f"{text.strip()!r}",
            }
        assert client.get("/v1/maps").json()["maps"] == []


def test_negative_zero_costs_enter_as_zero(client: TestClient) -> None:
    """``-0.0`` was stored and served as ``-0.0``."""
    for content, headers in (
        (b'{"costs": [[-0.0, 1.0], [1.0, -0]]}', {"content-type": "application/json"}),
        (npy_bytes(np.array([[-0.0, 1.0], [1.0, -0.0]], np.float32)), {"content-type": NPY}),
    ):
        created = client.post("/v1/maps", content=content, headers=headers)
        assert created.status_code == 201, created.text
        grid = np.load(io.BytesIO(client.get(f"/v1/maps/{created.json()['id']}/grid").content))
        assert grid.tolist() == [[0.0, 1.0], [1.0, 0.0]]
        assert not np.signbit(grid).any()
