# gpumeter's container image. Two stages:
# - build: Debian 12 with only the packages compiling needs (`scripts/setup.sh --build-only`),
#   which builds the binary and assembles the runtime's root filesystem in /rootfs: the binary,
#   exactly the shared libraries `ldd` lists for it (glibc's loader included), CA certificates,
#   and a package list (the SBOM) taken from dpkg while the files are copied.
# - runtime: FROM scratch with that tree only. No shell, no package manager, no dpkg: nothing to
#   patch but the listed packages, and nothing an intruder could run but gpumeter.
# No NVML inside: the NVIDIA container runtime (runtimeClassName: nvidia) injects the host
# driver's libnvidia-ml.so.1 into /usr/lib/x86_64-linux-gnu, which the loader searches by default;
# see docs/deploy.md. Build: `make image` (daemonless, scripts/image.sh) or
#   docker build --build-arg VERSION=0.1.0 -t gpumeter:0.1.0 .
FROM docker.io/library/debian:12 AS build
WORKDIR /src
# The set-up script alone first: its layer (the packages) is reused while only sources change.
COPY scripts/setup.sh scripts/setup.sh
RUN bash scripts/setup.sh --build-only \
 && apt-get install -y -qq --no-install-recommends ca-certificates >/dev/null \
 && rm -rf /var/lib/apt/lists/*
# Only what compiling reads, so that edits to docs, tests or manifests reuse the compiled layer.
COPY CMakeLists.txt ./
COPY cmake cmake
COPY proto proto
COPY src src
# Target gpumeter also builds the fake kubelet and fake NVML the demo uses (CMake dependencies);
# they stay in this stage (tests/image runs the demo from it) and never reach the runtime.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMETER_BUILD_TESTS=OFF >/dev/null \
 && cmake --build /build --target gpumeter -j"$(nproc)" \
 && strip --strip-debug /build/gpumeter
COPY scripts/image_rootfs.sh scripts/image_rootfs.sh
COPY LICENSE LICENSE
RUN bash scripts/image_rootfs.sh /build/gpumeter /rootfs
# The demo's scenarios, for tests/image's demo in this stage (not in the runtime).
COPY scenarios scenarios

FROM scratch
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG SOURCE=NOASSERTION
ARG CREATED=unknown
LABEL org.opencontainers.image.title="gpumeter" \
      org.opencontainers.image.description="GPU usage and cost per Kubernetes pod: the node agent" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.created="${CREATED}" \
      org.opencontainers.image.licenses="Apache-2.0"
COPY --from=build /rootfs/ /
# A non-root user (65532, "nonroot") by default: `gpumeter report`, `audit`, `rightsize` and an
# agent with --pods-file or no kubelet need nothing more. The DaemonSet runs it as uid 0
# (runAsUser: 0) with every capability dropped, because the kubelet's PodResources socket and
# /dev/nvidia* belong to root; only the MPS overlay adds SYS_PTRACE and DAC_READ_SEARCH, to read
# MPS clients' /proc/<pid>/environ. The root filesystem can be mounted read-only (the DaemonSet
# does): the agent writes only to its store's volume and /tmp.
USER 65532:65532
EXPOSE 9402
# The kubelet's probes, on a listener of their own (--probe-listen, docs/deploy.md "Probes").
EXPOSE 9401
ENTRYPOINT ["/usr/bin/gpumeter"]
CMD ["agent"]
