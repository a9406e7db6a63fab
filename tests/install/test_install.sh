#!/usr/bin/env bash
# wgfuse is embeddable: `cmake --install` into a fresh prefix, then examples/ built against that
# prefix alone, twice (pkg-config --cflags --libs wgfuse, and CMake's find_package(wgfuse)),
# and every example binary prints what the CLI prints for the same input:
#   run_prompt MODEL PROMPT N       == wgfuse run -m MODEL -p PROMPT -n N --temp 0 (stdout)
#   sim_population POP GENS SEED    == gen,best,mean of wgfuse sim train cartpole --pop POP
#                                      --gens GENS --seed SEED (its gen/s column dropped)
# Environment (tests/install/CMakeLists.txt): WGF_BUILD_DIR, WGF_SOURCE_DIR, WGF_CLI, WGF_CC,
# WGF_LIBDIR, WGF_TEST_TMP; WGF_INSTALL_SKIP set in sanitizer builds (their archive needs the
# sanitizer runtime at link time; the plain build covers embedding), which exits 77 = skipped.
# Prints PASS/FAIL lines and the harness's summary line.
set -uo pipefail
if [ -n "${WGF_INSTALL_SKIP:-}" ]; then
  echo "SKIP install and examples: $WGF_INSTALL_SKIP"
  echo "0 passed, 0 failed, 1 skipped"
  exit 77
fi
passed=0 failed=0
check() { # check NAME COMMAND...: PASS when the command succeeds
  local name=$1
  shift
  if "$@" >"$work/last.log" 2>&1; then
    passed=$((passed + 1))
    echo "PASS $name"
  else
    failed=$((failed + 1))
    echo "FAIL $name: $(tail -c 1500 "$work/last.log")"
  fi
}
work=$(mktemp -d "${WGF_TEST_TMP:-/tmp}/wgf-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
cc=${WGF_CC:-cc}

check "cmake --install into a fresh prefix" cmake --install "$WGF_BUILD_DIR" --prefix "$prefix"
export PKG_CONFIG_PATH=$prefix/$WGF_LIBDIR/pkgconfig
check "pkg-config knows wgfuse" pkg-config --exists wgfuse
mkdir -p "$work/pc"
for ex in run_prompt sim_population; do
  # shellcheck disable=SC2046
  check "examples/$ex.c builds with pkg-config --cflags --libs wgfuse" \
    "$cc" -std=c11 -O1 -Wall -Wextra -Werror "$WGF_SOURCE_DIR/examples/$ex.c" $(pkg-config --cflags --libs wgfuse) \
    -o "$work/pc/$ex"
done
check "examples/ build with find_package(wgfuse)" bash -c "
  cmake -S '$WGF_SOURCE_DIR/examples' -B '$work/cm' -DCMAKE_PREFIX_PATH='$prefix' -DCMAKE_C_COMPILER='$cc' \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS='-Wall -Wextra -Werror' >/dev/null &&
  cmake --build '$work/cm' >/dev/null"

# ---- the same input to the CLI and to each build of each example ------------------------------
same() { # same NAME EXPECTED_FILE COMMAND...: the command's stdout equals the file
  local name=$1 want=$2
  shift 2
  check "$name" bash -c '"$@" > "$0.got" 2>"$0.err" && cmp "$0" "$0.got"' "$want" "$@"
}
"$WGF_CLI" --quiet llm make-test-model --arch llama -o "$work/model" >/dev/null 2>&1 # untied: varied text
prompt="Tell me about otters."
"$WGF_CLI" --quiet run -m "$work/model" -p "$prompt" -n 16 --temp 0 >"$work/run.want" 2>"$work/run.err"
check "the CLI generates from the test model" test -s "$work/run.want"
"$WGF_CLI" --quiet sim train cartpole --pop 256 --gens 4 --seed 7 --target 1e9 --out "$work/x.policy" \
  >"$work/train.out" 2>&1 # "not solved" (target 1e9) exits 1: only the per-generation lines matter
{ echo "gen,best,mean"; grep -E '^[0-9]+,' "$work/train.out" | cut -d, -f1-3; } >"$work/sim.want"
check "the CLI trains 4 generations" test "$(wc -l <"$work/sim.want")" -eq 5
for b in pc cm; do
  same "run_prompt ($b) == wgfuse run" "$work/run.want" "$work/$b/run_prompt" "$work/model" "$prompt" 16
  same "sim_population ($b) == wgfuse sim train" "$work/sim.want" "$work/$b/sim_population" 256 4 7
done
echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
