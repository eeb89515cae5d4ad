# Container image for the NPU tiling service: tiling_server plus the tilingctl CLI (used by the
# health check and handy for `docker exec ... tilingctl tile ...`).
#
#   docker build -t npu-tiling:dev .
#   docker run --rm -p 50051:50051 -p 9464:9464 npu-tiling:dev
#   docker run --rm -p 50051:50051 -p 9464:9464 npu-tiling:dev --cache_size=100000 --log_level=debug
#
# Both stages use Debian 12 packages only (gRPC 1.51, protobuf 3.21, Abseil 20220623,
# prometheus-cpp 1.0, OpenBLAS 0.3.21 for the emulator's numerics, ONNX 1.12 for GetGraphTiling),
# the same versions the tree is developed and tested against.
# tests/deploy/runtime_packages_test.py checks that the runtime stage installs exactly the
# packages that `ldd tiling_server` needs.

# ---- build stage -------------------------------------------------------------------------------
FROM debian:bookworm AS build

RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      g++ cmake ninja-build pkg-config \
      libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler \
      libabsl-dev prometheus-cpp-dev nlohmann-json3-dev libopenblas-dev libonnx-dev \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /src
COPY . /src
# The source revision the service reports (GetGraphTiling, ListPlatforms, TilingResponse's
# provenance); the context has no .git, so pass it:
#   docker build --build-arg NPU_ENGINE_REVISION=$(git rev-parse --short=12 HEAD) ...
ARG NPU_ENGINE_REVISION=unknown
ENV NPU_ENGINE_REVISION=${NPU_ENGINE_REVISION}
# The release build: GCC profile-guided, trained by serving a sweep of GetTiling calls on
# 127.0.0.1 during the build (scripts/build_release.sh). Tests and benchmarks need GoogleTest /
# Google Benchmark and are not part of the image.
RUN scripts/build_release.sh /build

# ---- runtime stage -----------------------------------------------------------------------------
FROM debian:bookworm-slim AS runtime

# Only the shared libraries the two binaries link against; apt pulls their own dependencies
# (libssl3, libc-ares2, libre2-9, libcivetweb1, ...). A fixed numeric UID lets Kubernetes verify
# runAsNonRoot (deploy/k8s/deployment.yaml uses the same UID).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libabsl20220623 \
      libgrpc++1.51 \
      libgrpc29 \
      libonnx1 \
      libopenblas0-pthread \
      libprometheus-cpp-core1.0 \
      libprometheus-cpp-pull1.0 \
      libprotobuf32 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 tiling \
 && useradd --system --uid 10001 --gid tiling --no-create-home --home-dir /nonexistent \
      --shell /usr/sbin/nologin tiling

COPY --from=build /build/bin/tiling_server /build/bin/tilingctl /usr/local/bin/

USER 10001:10001

# 50051: gRPC (npu.tiling.v1.TilingService, grpc.health.v1.Health, server reflection).
# 9464: Prometheus metrics at /metrics.
EXPOSE 50051 9464

# Uses the standard gRPC health service through the project's own client. If you override
# --port in CMD, override the health check too (compose: `healthcheck.test`). No --start-period:
# the server binds within a second, and dockerfilelint 1.8 rejects that option (its option regex
# stops at the first '-').
HEALTHCHECK --interval=10s --timeout=5s --retries=3 \
  CMD ["tilingctl", "health", "--server", "127.0.0.1:50051"]

# Server flags (all optional; see `tiling_server --help`):
#   --address          listen address for gRPC (default 0.0.0.0)
#   --port             gRPC port (default 50051; 0 picks a free port and prints it)
#   --metrics_port     Prometheus /metrics port (default 9464; 0 picks a free port; -1 disables)
#   --cache_size       entries in the LRU decision cache (default 65536; 0 disables it)
#   --max_message_bytes, --max_inflight, --max_batch   request limits (overload -> RESOURCE_EXHAUSTED)
#   --log_level        error, warning, info (default) or debug
#   --drain_seconds    grace for in-flight calls after SIGTERM (default 5)
# SIGTERM turns health NOT_SERVING and drains in-flight calls before exiting 0; keep the
# orchestrator's stop timeout above --drain_seconds.
ENTRYPOINT ["tiling_server"]
CMD ["--address=0.0.0.0", "--port=50051", "--metrics_port=9464"]
