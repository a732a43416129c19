"""``warmup``: runs every kernel once (the service calls it before reporting ready)."""

from service.engine import warmup


def test_warmup_runs_every_kernel_without_error() -> None:
    warmup()
    warmup()  # idempotent: the second run only hits compiled code
