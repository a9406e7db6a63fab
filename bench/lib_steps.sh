# Sourced by the bench/h200_*.sh scripts that run a list of measurement steps into one folder.
#   steps_init OUT TAG   status.txt and results.jsonl emptied, Vulkan/XDG defaults set; TAG prefixes progress
#   step NAME cmd...     runs cmd; its stdout's last line (a JSON object) goes to results.jsonl with
#                        "step": NAME; all its output to logs/NAME.txt; "NAME rc=.. seconds=.." to status.txt
#   steps_env WG PY      the common env.txt lines: date, host, the script's commit (WGF_GIT_COMMIT when
#                        given), wgfuse --version (the binary's commit), the GPU, wgfuse info, torch
steps_init() {
  STEPS_OUT="$1"; STEPS_TAG="$2"
  mkdir -p "$STEPS_OUT/logs" || return 1
  export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"
  local nv_icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  if [ -z "${VK_DRIVER_FILES:-}" ] && [ -f "$nv_icd" ]; then export VK_DRIVER_FILES="$nv_icd"; fi
  : > "$STEPS_OUT/status.txt"
  : > "$STEPS_OUT/results.jsonl"
}
step() {
  local name="$1"; shift
  echo "[$STEPS_TAG] $name" >&2
  local t0=$(date +%s)
  "$@" > "$STEPS_OUT/logs/$name.txt" 2>&1; local rc=$?
  if [ $rc -eq 0 ]; then
    tail -1 "$STEPS_OUT/logs/$name.txt" | sed "s/^{/{\"step\": \"$name\", /" >> "$STEPS_OUT/results.jsonl"
  fi
  echo "$name rc=$rc seconds=$(( $(date +%s) - t0 ))" >> "$STEPS_OUT/status.txt"
}
steps_env() {
  local wg="$1" py="$2" root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  # the source tree running the script (WGF_GIT_COMMIT when given: a carried tree can hold a
  # stale .git); the binary may be older or built elsewhere, so the commit a result belongs
  # to is the one `wgfuse --version` names below
  echo "script git: ${WGF_GIT_COMMIT:-$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)}"
  echo "wgfuse --version:"
  "$wg" --version 2>&1 | sed 's/^/  /'
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv,noheader
  "$wg" info 2>&1 | head -6
  "$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)' 2>&1
}
