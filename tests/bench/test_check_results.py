#!/usr/bin/env python3
"""bench/check_results.py fails on what it is meant to catch (issue 19).

Each case writes a small RESULTS.md and raw file into a scratch repository and runs the
checker on it: a number that is in the raw file passes (also at a coarser precision and in
another unit); a number that is not fails and is named; a section citing no raw file fails; a
cited path that does not exist fails; "[no raw file]" rows, 'Derived columns:' and a dagger are
accepted and counted. Prints PASS/FAIL per case, exits 1 on any FAIL."""
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.environ.get("WGF_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
CHECK = os.path.join(SRC, "bench", "check_results.py")
TMP = os.environ.get("WGF_TEST_TMP", tempfile.gettempdir())

RAW = "one_pass 4.3812 us\nbytes 988000000\nratio 7.44\n"
TABLE = """# results

## Section
Raw: `bench/results/run1/`.

| mode | us | GB |
| --- | --- | --- |
| one_pass | {us} | {gb} |
{extra}
"""


def run(md, raw=RAW, cite_dir="run1"):
    root = tempfile.mkdtemp(prefix="check_results_", dir=TMP)
    try:
        os.makedirs(os.path.join(root, "bench", "results", cite_dir))
        with open(os.path.join(root, "bench", "results", cite_dir, "out.txt"), "w") as f:
            f.write(raw)
        res = os.path.join(root, "bench", "RESULTS.md")
        with open(res, "w") as f:
            f.write(md)
        p = subprocess.run([sys.executable, CHECK, "--root", root, "--results", res], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr
    finally:
        shutil.rmtree(root, ignore_errors=True)


failed = 0


def case(name, ok, detail):
    global failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail.strip().replace("\n", " | ")[:400]))
    failed += not ok


rc, out = run(TABLE.format(us="4.38", gb="0.988", extra=""))
case("numbers in the raw file (rounded, GB vs bytes) pass", rc == 0, out)
rc, out = run(TABLE.format(us="4.4", gb="0.99", extra=""))
case("a coarser rounding of a raw number passes", rc == 0, out)
rc, out = run(TABLE.format(us="4.39", gb="0.988", extra=""))
case("a number not in the raw file fails, named", rc == 1 and "4.39 is in none" in out, out)
rc, out = run(TABLE.format(us="4.38", gb="0.988", extra="| second | 7.0× | 1 |\n"))
case("a ratio not in the raw file fails", rc == 1 and "7.0 is in none" in out, out)
rc, out = run(TABLE.format(us="4.38", gb="0.988", extra="| second | 5.5†| 0.988 |\n"))
case("a number with a dagger is derived, accepted", rc == 0 and "1 in derived" in out, out)
rc, out = run(TABLE.format(us="4.38", gb="0.988", extra="| second | 9.99 | 0.988 |\n\nDerived columns: us\n"))
case("'Derived columns:' exempts its columns", rc == 0 and "2 in derived" in out, out)
rc, out = run(TABLE.format(us="4.38", gb="0.988", extra="| second | 1 | 2 |\n\nDerived columns: nope\n"))
case("'Derived columns:' naming no column fails", rc == 1 and "names 'nope'" in out, out)
md = TABLE.format(us="4.38", gb="0.988", extra="").replace("Raw: `bench/results/run1/`.", "No citation.")
rc, out = run(md)
case("a table in a section citing no raw file fails", rc == 1 and "cites no raw file" in out, out)
md = md.replace("| one_pass |", "| one_pass [no raw file] |")
rc, out = run(md)
case("rows marked [no raw file] are accepted and counted", rc == 0 and "1 legacy rows" in out, out)
rc, out = run(TABLE.format(us="4.38", gb="0.988", extra=""), cite_dir="run2")
case("a cited path that does not exist fails", rc == 1 and "does not exist" in out, out)
rc, out = run(TABLE.format(us="`4.39`", gb="0.988", extra=""))
case("text in backticks is not a measurement", rc == 0, out)

print(f"{11 - failed} passed, {failed} failed, 0 skipped")
sys.exit(1 if failed else 0)
