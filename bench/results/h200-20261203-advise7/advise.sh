#!/usr/bin/env bash
# the advisor's whole script on the H200 with the binary wg_$1 (carried gzipped)
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b && gunzip -c out/v/wg_$1.gz > /tmp/b/wg && chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so WGF_GIT_COMMIT=$2 WGFUSE=/tmp/b/wg
R=$OUT/advise; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_before.txt 2>&1
timeout 560 bench/h200_advise2.sh $R/main > $R/main.log 2>&1; echo "main rc=$?" >> $R/main.log
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvsmi_after.txt 2>&1
rm -rf $R/main/cache/nvidia* $R/main/cache/mesa* 2>/dev/null
tail -3 $R/main.log; tail -12 $R/main/status.txt; grep -A12 "within 25%" $R/main/advise2_table.txt | head -16
