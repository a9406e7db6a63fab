#!/usr/bin/env bash
# LLM load memory: peak resident set size while loading a ~1 GB f16 model.
#
# Protocol: write a random-weight Llama-shaped HF directory in f16 (dim 2048, hidden 5632,
# 10 layers, 16 heads / 4 kv heads, vocab 32000, tied: 1.03 GB of safetensors), then run
# the loader under /usr/bin/time -v: wgf_llm_model_load + wgf_llm_model_touch (reads every
# weight page, so the whole mapping becomes resident and the peak is the true worst case)
# + wgf_llm_model_free. Acceptance (issue 5): peak RSS <= 1.25 x the weights' file size.
# The same is measured for the GGUF F16 file of the same model, and for that file quantized
# to Q8_0 and Q4_K_M by `wgfuse llm quantize` (issue 14: blocks stay as stored).
#
# Entry point: `wgfuse llm load-check -m PATH` (CLI, owned by the llm-run part; contract:
# load, touch every weight, free, exit 0). Until that subcommand exists the script builds
# a 30-line helper against the static libraries instead (same three calls).
#
# Usage: bench/llm_load_rss.sh [BUILD_DIR [OUTDIR]]   (default build-llmfiles; needs a
# non-sanitizer build: ASan's shadow memory would dominate the RSS). With OUTDIR the table
# also goes to OUTDIR/load_rss.md and the machine plus `wgfuse --version` to OUTDIR/env.txt
# (the raw files a RESULTS.md section cites).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build-llmfiles}
OUTDIR=${2:-}
WORK=${WGF_BENCH_TMP:-$BUILD/bench_tmp/llm_load_rss}
mkdir -p "$WORK"
HELPER=$WORK/llm_load_rss_helper

cat > "$WORK/helper.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "wgfuse/llm_test_model.h"
#include "wgfuse/llm.h"
int main(int argc, char **argv)
{
    struct wgf_err e = {0};
    if (argc == 4 && !strcmp(argv[1], "write")) { /* write DIR|FILE hf|gguf */
        struct wgf_test_model_spec s;
        wgf_test_model_spec_default(&s, WGF_ARCH_LLAMA);
        s.dim = 2048, s.hidden_dim = 5632, s.n_layers = 10, s.n_heads = 16, s.n_kv_heads = 4;
        s.vocab_size = 32000, s.max_seq_len = 2048, s.tie_embeddings = true;
        struct wgf_test_model_opts o = {.format = strcmp(argv[3], "gguf") ? WGF_TEST_MODEL_HF : WGF_TEST_MODEL_GGUF,
                                        .dtype = WGF_DT_F16, .n_shards = 1};
        if (wgf_test_model_write(&s, &o, argv[2], &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "load")) {
        struct wgf_llm_model *m = NULL;
        if (wgf_llm_model_load(argv[2], &m, &e)) { fprintf(stderr, "%s\n", e.msg); return 1; }
        unsigned long long sum = wgf_llm_model_touch(m);
        printf("weights %llu bytes, checksum %llu\n", (unsigned long long)wgf_llm_model_weight_bytes(m), sum);
        wgf_llm_model_free(m);
        return 0;
    }
    fprintf(stderr, "usage: helper write PATH hf|gguf | helper load PATH\n");
    return 2;
}
C
cc -O2 -std=c11 -D_GNU_SOURCE -I"$ROOT/include" "$WORK/helper.c" \
   "$BUILD/libwgfuse_llm.a" "$BUILD/libwgfuse_gpu.a" "$BUILD/libwgfuse_util.a" \
   $(pkg-config --libs jansson libpcre2-8 icu-uc) -lm -lpthread -ldl -o "$HELPER"

[ -f "$WORK/hf/model.safetensors" ] || "$HELPER" write "$WORK/hf" hf
[ -f "$WORK/model-f16.gguf" ] || "$HELPER" write "$WORK/model-f16.gguf" gguf

WGFUSE=$BUILD/wgfuse
# the quantized files (issue 14): the same model quantized by wgfuse (blocks kept as they are
# in the mapping: the acceptance is the same 1.25 x the file)
for q in Q8_0 Q4_K_M; do
    f=$WORK/model-$q.gguf
    [ -f "$f" ] || "$WGFUSE" llm quantize "$WORK/model-f16.gguf" "$f" --type $q >/dev/null
done
use_cli=0
if [ -x "$WGFUSE" ] && "$WGFUSE" llm load-check -m "$WORK/hf" >/dev/null 2>&1; then use_cli=1; fi

measure() { # $1 = model path, $2 = weights file
    local log=$WORK/time.log
    if [ $use_cli = 1 ]; then /usr/bin/time -v "$WGFUSE" llm load-check -m "$1" >/dev/null 2>"$log"
    else /usr/bin/time -v "$HELPER" load "$1" >/dev/null 2>"$log"; fi
    local kb size
    kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print $2}' "$log")
    size=$(stat -c %s "$2")
    awk -v kb="$kb" -v sz="$size" -v p="$1" -v via="$([ $use_cli = 1 ] && echo 'wgfuse llm load-check' || echo helper)" \
        'BEGIN { printf "| %s | %.1f MB | %.1f MB | %.3f | %s |\n", p, sz/1e6, kb*1024/1e6, kb*1024/sz, via }'
}

table() {
    echo "| model | weights file | peak RSS | RSS / file | entry point |"
    echo "|---|---|---|---|---|"
    measure "$WORK/hf" "$WORK/hf/model.safetensors"
    measure "$WORK/model-f16.gguf" "$WORK/model-f16.gguf"
    measure "$WORK/model-Q8_0.gguf" "$WORK/model-Q8_0.gguf"
    measure "$WORK/model-Q4_K_M.gguf" "$WORK/model-Q4_K_M.gguf"
}
if [ -z "$OUTDIR" ]; then table; exit 0; fi
mkdir -p "$OUTDIR"
{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
    echo "script git: $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "wgfuse --version:"
    "$WGFUSE" --version 2>&1 | sed 's/^/  /' || echo "  (no wgfuse binary in $BUILD)"
} > "$OUTDIR/env.txt"
table | tee "$OUTDIR/load_rss.md.tmp.$$"
mv "$OUTDIR/load_rss.md.tmp.$$" "$OUTDIR/load_rss.md"
