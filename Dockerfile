# gridpath service image. Build: docker build --network host -t gridpath .
# BASE_IMAGE must provide python3 (3.11+) with venv, e.g. python:3.12-slim or a
# Debian bookworm image with python3 and python3-venv.
ARG BASE_IMAGE=python:3.12-slim

FROM ${BASE_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    NUMBA_CACHE_DIR=/opt/numba-cache
WORKDIR /src
COPY pyproject.toml README.md ./
COPY service ./service
# Dependencies are pinned to compatible ranges in pyproject.toml. The last command
# compiles every kernel into NUMBA_CACHE_DIR, so a new container is ready in seconds.
# It runs from / so that it imports the installed package: from /src it would import
# the source tree beside it, and numba keys its cache on the kernels' folder, so the
# containers would find a cold cache and compile at every start.
# hadolint ignore=DL3003,DL3013
RUN python3 -m venv /opt/venv \
 && /opt/venv/bin/pip install --no-cache-dir . \
 && cd / \
 && /opt/venv/bin/python -m service.engine

FROM ${BASE_IMAGE} AS runtime
# Metadata first, the large copies last: builders without layer sharing (the classic
# builder on vfs) copy the whole filesystem at every later step.
ENV PATH=/opt/venv/bin:$PATH \
    NUMBA_CACHE_DIR=/opt/numba-cache \
    PYTHONUNBUFFERED=1 \
    GRIDPATH_DATA_DIR=/data
EXPOSE 8000
# The slim image has no curl: ask /readyz with the interpreter we already ship.
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
  CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2).status != 200)"]
CMD ["python", "-m", "service", "--host", "0.0.0.0", "--port", "8000", "--data-dir", "/data"]
RUN groupadd --system --gid 10001 gridpath \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin gridpath \
 && mkdir -p /data \
 && chown 10001:10001 /data
WORKDIR /data
VOLUME ["/data"]
# Numeric, so the host can resolve it (hadolint DL3066). COPY is not affected by USER.
USER 10001:10001
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder --chown=10001:10001 /opt/numba-cache /opt/numba-cache
