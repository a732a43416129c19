"""The client stands alone: it imports (and works) in a Python where numba, FastAPI
and the service cannot be imported, and without numpy it answers in lists."""

import json
import subprocess
import sys
from typing import Any

from gridpath_client import MapInfo

from tests.client.test_client import COST, START

#: Makes the named top-level packages unimportable in the child Python.
BLOCKER = """
import sys

class Refuse:
    def __init__(self, names):
        self.names = names

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in self.names:
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Refuse(set(sys.argv[1].split(","))))
"""
SERVER_SIDE = "numba,fastapi,starlette,pydantic,uvicorn,orjson,service"


def run_blocked(blocked: str, script: str, *args: str) -> Any:
    """``script`` in a child Python with ``blocked`` unimportable; its printed JSON."""
    command = [sys.executable, "-c", BLOCKER + script, blocked, *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_import_needs_neither_numba_nor_fastapi() -> None:
    script = """
import json
import gridpath_client
from gridpath_client import Client

Client("http://127.0.0.1:1").close()
loaded = sorted({name.partition(".")[0] for name in sys.modules})
print(json.dumps(loaded))
"""
    loaded = run_blocked(SERVER_SIDE, script)
    assert "gridpath_client" in loaded
    assert "httpx" in loaded
    assert not set(loaded) & set(SERVER_SIDE.split(","))


def test_without_numpy_results_are_lists(server_url: str, rooms: MapInfo) -> None:
    script = """
import json
from gridpath_client import Client

try:
    Client(sys.argv[2], as_numpy=True)
    refused = ""
except ImportError as exc:
    refused = str(exc)
with Client(sys.argv[2]) as client:
    route = client.path(sys.argv[3], (2, 2), (28, 11), trace=False)
    field = client.field(sys.argv[3], [(28, 11)])
print(json.dumps({
    "refused": refused,
    "as_numpy": client.as_numpy,
    "numpy_loaded": "numpy" in sys.modules,
    "path_type": type(route.path).__name__,
    "first": route.path[0],
    "cost": route.cost,
    "field_type": type(field.cost).__name__,
    "field_start": field.cost[2][2],
    "field_wall": str(field.cost[1][1]),
    "next": field.next_cell(2, 2),
}))
"""
    seen = run_blocked(SERVER_SIDE + ",numpy", script, server_url, rooms.id)
    assert "gridpath-client[numpy]" in seen["refused"]  # as_numpy=True needs numpy
    assert seen["as_numpy"] is False
    assert seen["numpy_loaded"] is False
    assert (seen["path_type"], seen["first"], seen["field_type"]) == ("list", list(START), "list")
    assert abs(seen["cost"] - COST) < 1e-9
    assert abs(seen["field_start"] - COST) < 1e-9
    assert seen["field_wall"] == "inf"
    assert seen["next"] is not None
