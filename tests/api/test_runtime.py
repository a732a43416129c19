"""``Runtime``: readiness. Requests that need the kernels wait for the warm-up off the
event loop, up to ``GRIDPATH_READY_WAIT_SECONDS``, then answer 503 ``NotReady``;
a cold kernel cache is compiled in a child process."""

import asyncio
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import service.api.runtime as runtime_module
from service.api import create_app
from service.config import Settings
from service.store.priority import LOW_NICE
from tests.api.conftest import ClientFactory
from tests.support import Gate, wait_until

QUERY = {"rows": ["....", "...."]}


def test_an_upload_before_readiness_waits_then_succeeds(tmp_path: Path,
                                                        slow_warmup: threading.Event
                                                        ) -> None:  # fmt: skip
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        answers: list[int] = []
        waiting = threading.Thread(
            target=lambda: answers.append(client.post("/v1/maps", json=QUERY).status_code)
        )
        waiting.start()
        time.sleep(0.3)
        assert answers == []  # still waiting...
        assert client.get("/healthz").status_code == 200  # ...off the event loop
        assert client.get("/readyz").status_code == 503
        slow_warmup.set()
        waiting.join(30)
        assert answers == [201]


def test_past_the_wait_requests_answer_not_ready(tmp_path: Path, slow_warmup: threading.Event
                                                 ) -> None:  # fmt: skip
    settings = Settings(data_dir=tmp_path, ready_wait_seconds=0.05)
    with TestClient(create_app(settings)) as client:
        for method, url in (("POST", "/v1/maps"), ("POST", "/v1/maps/0123456789abcdef/path")):
            response = client.request(method, url, json=QUERY)
            if url.endswith("/path"):  # the map lookup comes first: unknown map
                assert response.json()["code"] == "MapNotFound"
                continue
            assert response.status_code == 503
            assert response.headers["retry-after"] == "1"
            assert response.json() == {
                "code": "NotReady",
                "message": "starting: kernels still compiling after 0.05 s "
                "(GRIDPATH_READY_WAIT_SECONDS); retry",
            }
        slow_warmup.set()


def test_a_failed_warm_up_answers_not_ready_at_once_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken() -> None:
        raise RuntimeError("no LLVM today")

    monkeypatch.setattr(runtime_module, "warmup", broken)
    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: True)
    with TestClient(create_app(Settings(data_dir=tmp_path, ready_wait_seconds=60))) as client:

        def refused() -> Any:
            response = client.post("/v1/maps", json=QUERY)
            return response if response.status_code == 503 else None

        began = time.monotonic()
        response = wait_until(refused, seconds=30, interval=0)
        assert response.json()["message"] == (
            "starting: RuntimeError: no LLVM today (GRIDPATH_READY_WAIT_SECONDS); retry"
        )
        assert time.monotonic() - began < 30  # not the 60 s wait
        assert client.get("/readyz").status_code == 503


def test_a_cold_kernel_cache_is_compiled_in_a_child_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    children: list[str] = []

    async def child(timeout: float) -> None:
        assert timeout == Settings().compile_timeout_seconds
        children.append("compiled")

    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: False)
    monkeypatch.setattr(runtime_module, "_compile_in_child", child)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200, seconds=60, interval=0.02)
    assert children == ["compiled"]
    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: True)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200, seconds=60, interval=0.02)
    assert children == ["compiled"]  # a warm cache: no child


def test_a_shutdown_during_the_child_compile_leaves_no_orphan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compile's own processes (one per part) compiled on after a shutdown, holding
    its stderr, and the shutdown waited for them."""
    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: False)
    started: list[int] = []
    grandchild = tmp_path / "grandchild.pid"
    real_exec = asyncio.create_subprocess_exec
    # A stand-in for the compile: a process that starts one of its own, as the
    # compile does per part, and both sleep.
    program = (
        "import pathlib, subprocess, sys, time; "
        "part = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"pathlib.Path({str(grandchild)!r}).write_text(str(part.pid)); time.sleep(60)"
    )

    async def sleeper(*_args: object, **kwargs: Any) -> asyncio.subprocess.Process:
        child = await real_exec(sys.executable, "-c", program, **kwargs)
        started.append(child.pid)
        return child

    monkeypatch.setattr(asyncio, "create_subprocess_exec", sleeper)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        wait_until(lambda: started and grandchild.exists() and grandchild.read_text(),
                   seconds=30, interval=0.02)  # fmt: skip
        assert client.get("/readyz").status_code == 503
        stopping = time.monotonic()
    assert time.monotonic() - stopping < 20  # not the grandchild's 60 s
    with pytest.raises(ProcessLookupError):  # killed and reaped at shutdown
        os.kill(started[0], 0)
    part = int(grandchild.read_text())
    wait_until(lambda: not alive(part), seconds=10, message=f"process {part} outlived the compile")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, killed and waiting for its parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def test_a_compile_child_that_cannot_start_falls_back_to_compiling_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def cannot(*_args: object, **_kwargs: object) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(runtime_module, "kernels_warm", lambda: False)
    monkeypatch.setattr(asyncio, "create_subprocess_exec", cannot)
    with TestClient(create_app(Settings(data_dir=tmp_path))) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200,  # compiled (or loaded) here
                   seconds=120, interval=0.02, message="never became ready")  # fmt: skip


@pytest.mark.skipif(sys.platform != "linux", reason="per-thread priority is Linux's")
def test_builds_and_repairs_run_at_the_background_priority(make_client: ClientFactory) -> None:
    client = make_client(background_priority="low")
    runtime = client.app.state.runtime  # type: ignore[attr-defined]

    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    for pool in (runtime.tables._pool, runtime.editor._repairs._pool):
        assert pool.submit(nice).result(timeout=30) == LOW_NICE
    assert runtime.executor.submit(nice).result(timeout=30) < LOW_NICE  # queries: not lowered


def test_the_search_threads_queue_is_bounded(
    make_client: ClientFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every request needing a search thread joined one unbounded queue: batches sent
    # by one client kept the others' queries waiting for tens of seconds.
    from service.api.routes import paths as paths_routes

    client = make_client(max_waiting_work=1, inline_expansions=0)
    map_id = client.post("/v1/maps", json={"rows": ["....", "...."]}).json()["id"]
    query = {"start": [0, 0], "goal": [3, 1]}
    running = Gate(monkeypatch, paths_routes, "_run_cached")
    first: list[int] = []
    waiting = threading.Thread(target=lambda: first.append(
        client.post(f"/v1/maps/{map_id}/path", json=query).status_code))  # fmt: skip
    waiting.start()
    try:
        assert running.started.wait(30)
        # (Another query: an identical one would wait for the first's answer.)
        other = {"start": [0, 0], "goal": [2, 1]}
        refused = client.post(f"/v1/maps/{map_id}/path", json=other)
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "1")
        assert refused.json() == {"code": "NotReady", "message": "1 requests wait for the "
                                  "search threads, the most allowed "
                                  "(GRIDPATH_MAX_WAITING_WORK); retry"}  # fmt: skip
    finally:
        running.release.set()
        waiting.join(30)
    assert first == [200]
    assert client.post(f"/v1/maps/{map_id}/path", json=query).status_code == 200


def test_a_compiling_childs_steps_are_logged_as_they_come(caplog: pytest.LogCaptureFixture) -> None:
    """Regression: the first start compiled for about a minute without a word."""
    script = ("import sys\n"
              "print('gridpath-compile: search kernels, step 1 of 4: batches', file=sys.stderr)\n"
              "print('a warning of its own', file=sys.stderr)\n")  # fmt: skip

    async def relay() -> str:
        child = await asyncio.create_subprocess_exec(sys.executable, "-c", script,
                                                     stderr=asyncio.subprocess.PIPE)  # fmt: skip
        others = await runtime_module._relayed_progress(child)
        await child.wait()
        return others

    with caplog.at_level("INFO", logger="gridpath"):
        assert asyncio.run(relay()) == "a warning of its own"
    steps = [r.getMessage() for r in caplog.records if "compiling the kernels" in r.getMessage()]
    assert len(steps) == 1
    assert steps[0].endswith("s): search kernels, step 1 of 4: batches")
