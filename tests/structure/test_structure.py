#!/usr/bin/env python3
"""The structure check catches what it is there to catch (docs/architecture.md).

scripts/check_structure.py runs in every build; this test proves it fails. It copies src/ and
include/ to a scratch directory, confirms the clean copy passes, then plants one violation at
a time and expects a failure naming it:
  includes  a runtime file including a part above it (gpu -> bench), a sideways include
            (sim -> llm), another part's private header (cli -> src/llm/gguf.h), an installed
            header including a private one, <mpi.h> outside src/cli/sim_mpi.c, and a cycle
            between two headers;
  objects   tiny object files compiled here: a gpu-layer object calling into bench, two sim
            objects calling each other (a file cycle), and a clean gpu <- sim pair.
Reports one line per case and "N passed, N failed, 0 skipped" (the harness's format)."""

import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("WGF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(SRC, "scripts", "check_structure.py")
CC = os.environ.get("WGF_CC", "cc")
passed = failed = 0


def report(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"PASS {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {detail}")


def check(root, objects=None):
    args = [sys.executable, CHECK, "--root", root]
    for lib, path in (objects or {}).items():
        args += ["--objects", f"{lib}={path}"]
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def fresh_copy(base, name):
    root = os.path.join(base, name)
    shutil.copytree(os.path.join(SRC, "src"), os.path.join(root, "src"))
    shutil.copytree(os.path.join(SRC, "include"), os.path.join(root, "include"))
    return root


def append(root, rel, text):
    with open(os.path.join(root, rel), "a", encoding="utf-8") as f:
        f.write(text)


def expect_failure(base, name, plant, needle):
    root = fresh_copy(base, name.replace(" ", "_").replace("/", "_"))
    plant(root)
    rc, out = check(root)
    report(rc == 1 and needle in out, f"planted: {name}", f"rc={rc}, wanted '{needle}' in: {out[-600:]}")


def obj(base, name, code):
    c = os.path.join(base, name + ".c")
    o = os.path.join(base, name + ".c.o")
    with open(c, "w", encoding="utf-8") as f:
        f.write(code)
    subprocess.run([CC, "-c", "-O0", "-o", o, c], check=True)
    return o


def listing(base, name, objs):
    path = os.path.join(base, name + ".objects")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(objs) + "\n")
    return path


def main():
    base = tempfile.mkdtemp(prefix="wgf-structure-", dir=os.environ.get("WGF_TEST_TMP"))
    try:
        clean = fresh_copy(base, "clean")
        rc, out = check(clean)
        report(rc == 0, "the tree as it is passes", out[-600:])

        expect_failure(base, "gpu includes bench (up a layer)",
                       lambda r: append(r, "src/gpu/buffer.c", '\n#include "wgfuse/bench.h"\n'), "reaches up into bench")
        expect_failure(base, "sim includes llm (sideways)",
                       lambda r: append(r, "src/sim/policy.c", '\n#include "wgfuse/llm.h"\n'), "are siblings")
        expect_failure(base, "cli includes a private llm header",
                       lambda r: append(r, "src/cli/cmd_run.c", '\n#include "llm/gguf.h"\n'), "is private to src/llm/")
        expect_failure(base, "llm includes serve (up a layer)",
                       lambda r: append(r, "src/llm/generate.c", '\n#include "wgfuse/serve.h"\n'), "reaches up into serve")
        expect_failure(base, "cli includes a private serve header",
                       lambda r: append(r, "src/cli/cmd_run.c", '\n#include "serve/serve_internal.h"\n'),
                       "is private to src/serve/")
        expect_failure(base, "an installed header includes a private one",
                       lambda r: append(r, "include/wgfuse/sim.h", '\n#include "sim/sim_internal.h"\n'),
                       "an installed header includes a header that is not installed")

        expect_failure(base, "mpi.h outside src/cli/sim_mpi.c",
                       lambda r: append(r, "src/sim/evolve.c", '\n#include <mpi.h>\n'),
                       "only src/cli/sim_mpi.c may include it")

        def header_cycle(r):
            append(r, "src/sim/cycle_a.h", '#include "sim/cycle_b.h"\n')
            append(r, "src/sim/cycle_b.h", '#include "sim/cycle_a.h"\n')
        expect_failure(base, "two headers include each other", header_cycle, "include cycle: src/sim/cycle_a.h")

        # ---- object files: calls against the layers and between files -----------------
        gpu_up = obj(base, "gpu_up", "void wgf_bench_thing(void);\nvoid wgf_gpu_a(void) { wgf_bench_thing(); }\n")
        bench = obj(base, "bench_thing", "void wgf_bench_thing(void) {}\n")
        rc, out = check(clean, {"wgfuse_gpu": listing(base, "gpu1", [gpu_up]),
                                "wgfuse_bench": listing(base, "bench1", [bench])})
        report(rc == 1 and "uses wgf_bench_thing" in out and "up across the layers" in out,
               "planted: a gpu object calls into bench", out[-600:])

        c1 = obj(base, "sim_one", "void wgf_sim_two(void);\nvoid wgf_sim_one(void) { wgf_sim_two(); }\n")
        c2 = obj(base, "sim_two", "void wgf_sim_one(void);\nvoid wgf_sim_two(void) { wgf_sim_one(); }\n")
        rc, out = check(clean, {"wgfuse_sim": listing(base, "sim2", [c1, c2])})
        report(rc == 1 and "file cycle" in out and "sim_one" in out and "sim_two" in out,
               "planted: two sim files call each other", out[-600:])

        g = obj(base, "gpu_base", "void wgf_gpu_base(void) {}\n")
        s = obj(base, "sim_user", "void wgf_gpu_base(void);\nvoid wgf_sim_user(void) { wgf_gpu_base(); }\n")
        rc, out = check(clean, {"wgfuse_gpu": listing(base, "gpu3", [g]), "wgfuse_sim": listing(base, "sim3", [s])})
        report(rc == 0, "a sim object calling the runtime passes", out[-600:])

        l_up = obj(base, "llm_up", "void wgf_serve_thing(void);\nvoid wgf_llm_a(void) { wgf_serve_thing(); }\n")
        sv = obj(base, "serve_thing", "void wgf_serve_thing(void) {}\n")
        rc, out = check(clean, {"wgfuse_llm": listing(base, "llm4", [l_up]), "wgfuse_serve": listing(base, "serve4", [sv])})
        report(rc == 1 and "uses wgf_serve_thing" in out and "up across the layers" in out,
               "planted: an llm object calls into serve", out[-600:])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{passed} passed, {failed} failed, 0 skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
