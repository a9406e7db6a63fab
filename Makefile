# wgfuse — the two commands a user needs:
#   make run    install what is missing, build, run the main job (`wgfuse report`)
#   make test   install what is missing, build, run every test, the page in headless Chromium
#               (test-web), then the ASan+UBSan+LSan build and the TSan build of the whole suite
# Other targets: setup, build, test-fast (normal build only), test-sanitize, test-tsan, clean,
#   web (web/wgfuse.wasm: the C core for the browser), test-web (the page in headless Chromium),
#   fuzz (each libFuzzer target for FUZZ_SECONDS, default 60), fuzz-smoke (replay seeds and
#   regressions only). See docs/reliability.md.

BUILD        ?= build
BUILD_ASAN   ?= build-asan
BUILD_TSAN   ?= build-tsan
BUILD_WEB    ?= build-web
JOBS         ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS  ?=
export XDG_RUNTIME_DIR ?= /tmp/wgfuse-xdg-$(shell id -u)
# detect_stack_use_after_return: a callback target on a stack frame that is gone (a wait
# that gave up while its callback was pending) is a bug ASan misses without it
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0:detect_stack_use_after_return=1 \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
          LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0

.PHONY: all setup build run test test-fast test-sanitize test-tsan test-web web clean fuzz fuzz-build fuzz-smoke

# ---- fuzzing (clang libFuzzer + ASan + UBSan; targets in fuzz/) -------------------------------
# Limits (RELIABILITY.md): inputs up to 64 KiB (2 KiB for tokenize, whose cost is ~1.4 us per
# prompt byte under ASan; long prompts are covered by the item-25 tests; 1 KiB for added_tokens,
# whose brute-force reference costs O(vocabulary) per text byte), so "2x input + 1 MiB" is at most 1.125 MiB and
# -malloc_limit_mb=1 fails any single allocation >= 1 MiB (libFuzzer's limit is per
# allocation, in whole MiB); -rss_limit_mb=2048; 10 s per input. New corpus entries go to
# $(BUILD_FUZZ)/corpus/<target> (kept between runs); crashes to $(BUILD_FUZZ)/crashes/<target>/;
# one line per target run is appended to $(BUILD_FUZZ)/fuzz_totals.tsv (date, commit, target,
# seconds, executions, result) for the cumulative counts in docs/reliability.md.
BUILD_FUZZ   ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= gguf_parse gguf_vocab safetensors_parse tokenizer_json tokenize config_json argv policy_load added_tokens chat_template \
                serve_request
FUZZ_FLAGS    = -malloc_limit_mb=1 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1
FUZZ_CFLAGS   = -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_ENV      = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_odr_violation=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

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

# ThreadSanitizer over the whole suite (cpu-ref's worker threads, Dawn's callbacks). clang:
# GCC 12's TSan runtime crashes at start-up on this kernel's address layout. No ifunc
# clones under TSan (src/llm/forward_ref.c): resolvers run before the TSan runtime is up.
test-tsan: setup
	@mkdir -p $(XDG_RUNTIME_DIR) && chmod 700 $(XDG_RUNTIME_DIR)
	@CC=clang cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWGF_TSAN=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_TSAN) -j $(JOBS)
	cd $(BUILD_TSAN) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp ctest -j $(JOBS) --output-on-failure --timeout 1800

# The browser build: util, gpu, bench, sim, llm as web/wgfuse.wasm (clang for wasm32-wasi,
# web/CMakeLists.txt); serve web/ with any static server (tests/web/serve.mjs) and open it.
web: setup
	@cmake -S web -B $(BUILD_WEB) -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/wasm32-wasi.cmake >/dev/null
	@cmake --build $(BUILD_WEB) -j $(JOBS)

# The page in headless Chromium (WebGPU on SwiftShader) against the native build on the same
# SwiftShader (tests/web/test_web.mjs). Exit 77 = skipped, only when Chromium is absent.
test-web: build web
	@cd tests/web && WGF_BUILD=$(CURDIR)/$(BUILD) node test_web.mjs; rc=$$?; \
	  if [ $$rc -eq 77 ]; then echo "test-web: SKIPPED (no Chromium)"; else exit $$rc; fi

test: test-fast test-web test-sanitize test-tsan

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_WEB)

fuzz-build: setup
	@CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWGF_FUZZ=ON -DWGF_BUILD_TESTS=OFF \
	  "-DCMAKE_C_FLAGS=$(FUZZ_CFLAGS)" $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))

# Every target runs its full time even when an earlier one failed; any crash fails the target.
fuzz: fuzz-build
	@failed=""; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(BUILD_FUZZ)/corpus/$$t $(BUILD_FUZZ)/crashes/$$t fuzz/regressions/$$t; \
	  extra="-max_len=65536"; [ $$t = argv ] && extra="$$extra -close_fd_mask=3"; \
	  [ $$t = tokenize ] && extra="-max_len=2048"; [ $$t = added_tokens ] && extra="-max_len=1024"; \
	  echo "[fuzz] $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_ENV) $(BUILD_FUZZ)/fuzz/fuzz_$$t $(FUZZ_FLAGS) $$extra -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(BUILD_FUZZ)/crashes/$$t/ $(BUILD_FUZZ)/corpus/$$t fuzz/corpus/$$t fuzz/regressions/$$t \
	    > $(BUILD_FUZZ)/fuzz_$$t.log 2>&1 || failed="$$failed $$t"; \
	  n=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(BUILD_FUZZ)/fuzz_$$t.log); \
	  case " $$failed " in *" $$t "*) r=CRASH;; *) r=ok;; esac; \
	  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$$(date -u +%FT%TZ)" "$$(git rev-parse --short HEAD 2>/dev/null)" $$t \
	    $(FUZZ_SECONDS) "$${n:-?}" $$r >> $(BUILD_FUZZ)/fuzz_totals.tsv; \
	  echo "[fuzz] $$t: $${n:-?} executions, $$r"; \
	done; \
	if [ -n "$$failed" ]; then for t in $$failed; do echo "[fuzz] FAILED $$t:"; \
	  grep -E -A30 'ERROR|invariant|deadly|timeout|out-of-memory|malloc' $(BUILD_FUZZ)/fuzz_$$t.log | head -60; \
	  ls $(BUILD_FUZZ)/crashes/$$t; done; exit 1; fi

# Replay the committed seeds and regressions through every target (seconds).
fuzz-smoke: fuzz-build
	@for t in $(FUZZ_TARGETS); do extra="-max_len=65536"; [ $$t = argv ] && extra="$$extra -close_fd_mask=3"; mkdir -p fuzz/regressions/$$t; \
	  $(FUZZ_ENV) $(BUILD_FUZZ)/fuzz/fuzz_$$t $(FUZZ_FLAGS) $$extra -runs=0 fuzz/corpus/$$t fuzz/regressions/$$t \
	    > $(BUILD_FUZZ)/smoke_$$t.log 2>&1 || { echo "[fuzz-smoke] $$t FAILED"; tail -40 $(BUILD_FUZZ)/smoke_$$t.log; exit 1; }; \
	  echo "[fuzz-smoke] $$t ok"; done
