# gpumeter's container image: built on Debian 12 with the same set-up script as CI, run on slim
# Debian 12 with the binary and its shared libraries only. No NVML inside: the NVIDIA container
# runtime (runtimeClassName: nvidia) injects the host driver's libnvidia-ml.so.1 at start; see
# docs/deploy.md. Build: docker build -t gpumeter:0.1.0 .
FROM debian:12 AS build
WORKDIR /src
COPY . .
RUN bash scripts/setup.sh \
 && cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUMETER_BUILD_TESTS=OFF \
 && cmake --build /build --target gpumeter -j"$(nproc)" \
 && strip --strip-debug /build/gpumeter \
 && for lib in $(ldd /build/gpumeter | awk '/=> \// {print $3}'); do \
      dpkg -S "$lib" 2>/dev/null || dpkg -S "$(realpath "$lib")"; \
    done | cut -d: -f1 | sort -u > /build/runtime-packages.txt

FROM debian:12-slim
# Exactly the Debian packages that hold the libraries the binary links (listed by ldd in the build
# stage: gRPC/protobuf, yaml-cpp, spdlog/fmt, cpp-httplib with OpenSSL, zlib, brotli), and CA
# certificates for the API server.
COPY --from=build /build/runtime-packages.txt /tmp/
RUN apt-get update \
 && xargs -a /tmp/runtime-packages.txt apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* /tmp/runtime-packages.txt
COPY --from=build /build/gpumeter /usr/bin/gpumeter
# Root is required (the PodResources socket and /dev/nvidia* belong to root); the DaemonSet drops
# every capability but SYS_PTRACE and DAC_READ_SEARCH and mounts the root filesystem read-only.
USER 0
EXPOSE 9400
ENTRYPOINT ["/usr/bin/gpumeter"]
CMD ["agent"]
