"""``borrowing``: the search kernels compile without reference counting."""

from service.engine import GridMap, PathQuery, SearchOptions, find_path, find_paths
from service.engine.kernels import (
    astar,
    batch,
    bidirectional,
    clusters,
    dial,
    heap,
    ida,
    jps,
    lines,
    paths,
    sliced,
)

#: Every kernel a search runs that is not inlined into another.
SEARCH_KERNELS = (
    jps.jps, jps.scan, jps.jump_straight, jps.jump_diagonal, astar.astar, dial.dial,
    heap.sift_up, heap.sift_down, heap.push, heap.decrease, heap.pop, heap.lazy_compact,
    batch.search_handles, batch.search_one, batch.search_many,
    lines.line_length,
    lines.trace_line, lines.line_cost, paths.chain_length, paths.write_chain,
    paths.write_turns_and_length, paths.segment_lengths,
    paths.write_jump_chain, paths.jump_points, paths.write_jump_path, clusters.unpack_row,
    sliced.sliced, sliced._begin, sliced._reorder, sliced._admit, bidirectional.bidirectional,
    bidirectional.meeting_length, bidirectional.write_meeting_path, ida.ida, ida.write_cells,
)  # fmt: skip


def test_search_kernels_count_no_references() -> None:
    # Regression: numba counted references to the arrays in ``jps`` (a dozen
    # NRT_incref/NRT_decref calls per successor, which its pruning pass could not
    # remove in so large a function), which slowed the kernel down considerably.
    for kernel in SEARCH_KERNELS:
        assert kernel.targetoptions.get("_nrt") is False, kernel.__name__


def test_kernels_compiled_here_call_no_counting_function() -> None:
    # The compiled code itself, for the kernels this process compiled rather than
    # loaded from numba's cache (which keeps machine code only).
    grid = GridMap.from_rows(["......", ".##...", "....#.", "......"])
    grid.prepare_jumps()
    find_path(grid, (0, 0), (5, 3))
    find_paths(grid, [PathQuery((0, 0), (5, 3)), PathQuery((5, 0), (0, 3))])
    for algorithm in ("bidirectional", "ida", "beam"):
        find_path(grid, (0, 0), (5, 3), options=SearchOptions(algorithm=algorithm))
    for kernel in SEARCH_KERNELS:
        for signature in kernel.signatures:
            if kernel.stats.cache_hits.get(signature):
                continue  # loaded: no IR to read
            code = kernel.inspect_llvm(signature)
            assert "NRT_incref" not in code, kernel.__name__
