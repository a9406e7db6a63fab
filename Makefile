# wgfuse — the two commands a user needs:
#   make run    install what is missing, build, run the main job (`wgfuse report`)
#   make test   install what is missing, build, run every test (then the sanitizer build)
# Other targets: setup, build, test-fast (normal build only), test-sanitize, clean.

BUILD        ?= build
BUILD_ASAN   ?= build-asan
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS  ?=
export XDG_RUNTIME_DIR ?= /tmp/wgfuse-xdg-$(shell id -u)
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0 \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
          LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0

.PHONY: all setup build run test test-fast test-sanitize clean

all: build

setup:
	@bash scripts/setup.sh

build: setup
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/wgfuse report

test-fast: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure --timeout 900

test-sanitize: setup
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DWGF_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && $(SAN_ENV) ctest -j $(JOBS) --output-on-failure --timeout 1800

test: test-fast test-sanitize

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
