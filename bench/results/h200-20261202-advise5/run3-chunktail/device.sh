#!/usr/bin/env bash
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
export WGFUSE_WEBGPU_LIB=$PWD/third_party/dawn/libwebgpu_wrapper.so WGF_GIT_COMMIT=${COMMIT:-wip}
export WGFUSE=$PWD/out/wgfuse_b
R=$OUT/r; mkdir -p $R
pack() { tar -C $OUT -czf $OUT/results.tgz r 2>/dev/null; }
for i in 1 2; do
WEIGHTS="" SHAPES_BSTAR="" TABLE=0 AUTOTUNE=0 timeout 120 bench/h200_advise2.sh $R/sim$i > $R/sim$i.log 2>&1; echo "sim rc=$?" >> $R/sim$i.log
pack
grep -A4 "within 25" $R/sim$i/advise2_table.txt; awk '{ if ($6+0 > 15 || $6+0 < -15) print }' $R/sim$i/advise2_table.txt
grep -h -o '"probe":{[^}]*}' $R/sim$i/logs/advise_sim_L500_fused.txt | head -1
done
