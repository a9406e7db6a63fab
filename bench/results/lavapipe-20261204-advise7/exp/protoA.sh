#!/bin/bash
cd /work/main
export CPUS=1 LP_NUM_THREADS=0 XDG_RUNTIME_DIR=/tmp WGFUSE=/tmp/wg7 WGF_GIT_COMMIT=b2dae89
POP=1024 SHAPE=tiny WEIGHTS="f16 f32" N=256 RUNS=3 P=16 SHAPES_BSTAR="" TABLE=0 AUTOTUNE=0 QUICK=--quick bench/h200_advise2.sh bench/results/lavapipe-20261204-advise7/run$1-b2dae89 > /tmp/exp/proto$1.log 2>&1
LENGTHS=" " POP=1024 SHAPE=qwen2.5-0.5b WEIGHTS="f16 f32" N=16 RUNS=1 P=8 SHAPES_BSTAR="" TABLE=0 AUTOTUNE=0 QUICK=--quick bench/h200_advise2.sh bench/results/lavapipe-20261204-advise7/qwen$1-b2dae89 >> /tmp/exp/proto$1.log 2>&1
