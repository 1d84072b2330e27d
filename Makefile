# The two commands of the README, on a fresh Debian 12 machine as root:
#   make demo   - installs the build packages only, builds the binary and the demo's fakes (the
#                 fake kubelet and fake NVML are CMake dependencies of target gpumeter), runs it
#   make test   - installs everything the tests need, builds every target, runs every test
# The image (docs/deploy.md; not in CI: it takes minutes and needs the container tools):
#   make image       - gpumeter:<version> and build/image/gpumeter-<version>.oci.tar
#   make image-test  - runs that image as the DaemonSet would (tests/image/run.sh)
# CMAKE_FLAGS adds CMake options (CI: -DGPUMETER_WERROR=ON, -DGPUMETER_SANITIZE=ON);
# DEMO_ARGS passes options to `gpumeter demo` (default: 10 scenario seconds per second, 30 s;
# e.g. DEMO_ARGS="--scenario mig-h200 --duration 0" runs until Ctrl-C).
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
DEMO_ARGS ?= --speedup 10

.PHONY: setup setup-build build build-demo demo test bench-gate bench-baseline fuzz soak fleet-bench bill-bench dcgm-bench image image-test image-push image-push-test format clean

setup:
	@bash scripts/setup.sh

setup-build:
	@bash scripts/setup.sh --build-only

build: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUMETER_BUILD_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2

# Tests off: without them CMake needs no gtest, and only the demo's three targets are built.
build-demo: setup-build
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUMETER_BUILD_TESTS=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2 --target gpumeter

demo: build-demo
	$(BUILD)/gpumeter demo $(DEMO_ARGS)

# CTEST_ARGS narrows the run (CI's sanitizer pass: -LE heavy).
CTEST_ARGS ?=
test: build
	cd $(BUILD) && ctest -j2 --output-on-failure $(CTEST_ARGS)

# The hot path's regression gate (CI's first pass, after the tests): the gated benchmarks, medians
# of 5, as ratios to a reference workload run beside them, against bench/baseline.json; fails on a
# ratio over 1.5x the baseline's. A slower hot path that is intended moves the baseline, with the
# reason kept in its history: make bench-baseline REASON="...", then commit bench/baseline.json.
bench-gate:
	@python3 bench/gate.py check $(BUILD)/bench/gpumeter_bench bench/baseline.json

bench-baseline:
	@cmake --build $(BUILD) -j2 --target gpumeter_bench
	@python3 bench/gate.py update $(BUILD)/bench/gpumeter_bench bench/baseline.json --reason "$(REASON)"

# Each fuzzer for FUZZ_SECONDS (default 5 min) from a copy of its seed corpus; CI runs 10 s each.
FUZZ_SECONDS ?= 300
fuzz: build
	@for f in $(BUILD)/fuzz/*_fuzz; do \
	  n=$$(basename $$f); work=$(BUILD)/fuzz/long-$$n; mkdir -p $$work; \
	  cp -r fuzz/corpus/$${n%_fuzz}/. $$work/; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -timeout=5 -rss_limit_mb=2048 $$work || exit 1; \
	done

# Memory soak (not in CI): the agent with a store and rightsizing for SOAK_SECONDS (2 h), RSS
# slope after the warm-up (docs/deploy.md has the figure). The warm-up runs past the store's first
# hour, while rightsizing's reads still grow with every minute stored (a one-time ramp).
SOAK_SECONDS ?= 7200
SOAK_WARMUP ?= 4500
soak: build
	@bash bench/soak.sh $(SOAK_SECONDS) 0.2 $(SOAK_WARMUP)

# Fleet scale benchmark (not in CI; minutes, gigabytes under FLEET_WORK): 10 nodes' series in a
# real Prometheus against their stores, report and rightsize side by side (docs/fleet.md), then
# the cardinality of one node's /metrics.
fleet-bench: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUMETER_BUILD_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2 --target gpumeter gpumeter_fleet_synth
	@BUILD=$(BUILD) bash bench/fleet.sh
	@bash bench/cardinality.sh $(BUILD)

# Bill benchmark (not in CI; minutes, ~1.5 GB under BILL_WORK): `report --bill` over a 1 GB FOCUS
# export, plain and gzip: median wall time, throughput and peak RSS (issue 34's targets).
bill-bench: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUMETER_BUILD_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2 --target gpumeter gpumeter_bill_synth
	@BUILD=$(BUILD) bash bench/bill.sh

# dcgm-exporter page benchmark (not in CI; under a minute): the peak RSS above idle of the DCGM
# source and `audit` reading a 16 and a 64 MiB page, a fresh process each (docs/deploy.md).
dcgm-bench: setup
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUMETER_BUILD_TESTS=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j2 --target gpumeter_dcgm_page_bench
	@BUILD=$(BUILD) bash bench/dcgm_page.sh

image:
	@bash scripts/image.sh

image-test:
	@bash tests/image/run.sh

# Push what `make image` built: make image-push REGISTRY=host[:port][/path] (docs/install.md).
image-push:
	@REGISTRY="$(REGISTRY)" bash scripts/image_push.sh

# make image-push against a registry on loopback (needs make image first; not in CI).
image-push-test:
	@bash tests/image/push_test.sh

# Reformat the C++ sources to .clang-format (CI fails on any difference).
format: setup
	@bash scripts/check_format.sh --fix

clean:
	rm -rf build build-*
