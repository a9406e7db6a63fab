#!/usr/bin/env bash
# issue 17 on the H200 at b2dae89: the whole bench/h200_advise2.sh, results packed into one tar
set -u
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json XDG_RUNTIME_DIR=/tmp
mkdir -p /tmp/b; gunzip -c out/v/wg_b2dae89.gz > /tmp/b/wg; chmod +x /tmp/b/wg
gunzip -c out/v/dawn.so.gz > /tmp/b/libwebgpu_wrapper.so
export WGFUSE_WEBGPU_LIB=/tmp/b/libwebgpu_wrapper.so
WGF_GIT_COMMIT=b2dae89 WGFUSE=/tmp/b/wg bash bench/h200_advise2.sh /tmp/main > $OUT/main.log 2>&1
tar czf $OUT/main.tgz -C /tmp main
tail -80 $OUT/main.log
