#!/usr/bin/env bash
# issue 14, twelfth cut, first call: what the NVIDIA driver compiled each pipeline to (registers,
# shared memory, spills), through a Vulkan layer that asks VK_KHR_pipeline_executable_properties
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
export VK_LAYER_PATH=$PWD/out/vkstats VK_INSTANCE_LAYERS=VK_LAYER_WGF_stats WGF_XLABELS=1
R=$OUT/r; mkdir -p $R/ir; T0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > $R/nvsmi.txt 2>&1
# s TAG SHAPE WEIGHTS KERNELS QCFG [args]
s() { local tag=$1 S=$2 W=$3 k=$4 q=$5; shift 5
  echo "$tag $S $W k=$k q=$q $*" >> $R/cfgs.txt
  local kd=""; [ -n "$k" ] && kd=$PWD/out/xk/$k
  WGF_VKSTATS_OUT=$R/vk_${tag}.txt WGF_KERNEL_DIR=$kd WGF_QCFG="$q" timeout 120 /tmp/b/wg llm bench --shape $S --plan roles --weights $W -n 64 --prompt-tokens 16 --runs 1 --json "$@" > $R/${tag}.json 2> $R/${tag}.err; }
WGF_VKSTATS_IR=$R/ir s phi_q4km phi-3-mini Q4_K_M "" ""
s phi_f16 phi-3-mini f16 "" ""
s phi_q4km_q8 phi-3-mini Q4_K_M "" "" --activations q8
s phi_q5km phi-3-mini Q5_K_M "" ""
s phi_q40 phi-3-mini Q4_0 "" ""
s phi_q80 phi-3-mini Q8_0 "" ""
s qwen_q4km qwen2.5-0.5b Q4_K_M "" ""
s qwen_f16 qwen2.5-0.5b f16 "" ""
s llama_q4km llama-3.2-1b Q4_K_M "" ""
for k in half db gxw lateh hyb; do s phi_$k phi-3-mini Q4_K_M $k ""; done
s phi_gu2 phi-3-mini Q4_K_M "" "ffn_gate_up/q4_k=2:6:0"
s phi_gu1 phi-3-mini Q4_K_M "" "ffn_gate_up/q4_k=4:4:0,attn_qkv/q5_k=2:2:0"
s phi_gu8 phi-3-mini Q4_K_M "" "ffn_gate_up/q4_k=1:3:0,attn_qkv/q5_k=1:3:0"
echo "end +$(( $(date +%s) - T0 )) s" >> $R/time.txt
python3 out/vkstats/join.py $R/vk_*.txt > $R/regs.txt
for f in $R/*.json; do echo "$(basename $f) $(python3 -c "import json,sys; d=json.load(open('$f')); print(d.get('decode_tok_s_median'))" 2>&1 | tail -1)"; done > $R/toks.txt
cat $R/regs.txt | head -150; cat $R/toks.txt $R/time.txt; ls $R/ir | head; ls $R/ir | wc -l
tar -C $OUT -czf $OUT/r.tgz r
