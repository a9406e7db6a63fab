#!/usr/bin/env bash
# issue 14, twelfth cut, fifth call: the machine code the NVIDIA driver compiled (pipeline-cache
# blobs through the layer, ELF images in them disassembled with nvdisasm), Phi-3-mini Q4_K_M and f16
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_x.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
export VK_LAYER_PATH=$PWD/out/vkstats VK_INSTANCE_LAYERS=VK_LAYER_WGF_stats WGF_XLABELS=1
R=$OUT/r; mkdir -p $R
for W in Q4_K_M f16; do
  mkdir -p /tmp/pc_$W
  WGF_VKSTATS_CACHE=/tmp/pc_$W WGF_VKSTATS_OUT=$R/vk_$W.txt timeout 120 /tmp/b/wg llm bench --shape phi-3-mini --plan roles --weights $W -n 8 --prompt-tokens 16 --runs 1 --json > $R/$W.json 2> $R/$W.err
  ls -la /tmp/pc_$W > $R/cache_$W.txt
  python3 out/vkstats/sass.py /tmp/pc_$W /tmp/sass_$W > $R/sass_$W.txt 2>&1
done
which nvdisasm cuobjdump >> $R/tools.txt 2>&1
cat $R/sass_Q4_K_M.txt | head -40; head -c 600 $(ls -S /tmp/pc_Q4_K_M/*.cache | head -1) | xxd | head -20
ls /tmp/sass_Q4_K_M | head; cat /tmp/sass_Q4_K_M/*.err 2>/dev/null | head -5
tar -C /tmp -czf $OUT/sass.tgz sass_Q4_K_M sass_f16; tar -C $OUT -czf $OUT/r.tgz r
