#!/usr/bin/env python3
"""Check that every number in a table of bench/RESULTS.md traces to a raw file (issue 19).

    python3 bench/check_results.py [--results bench/RESULTS.md] [--verbose]

Rules (also stated at the top of RESULTS.md):
  - A section is a "##" or "###" heading and the text up to the next one. The raw files a
    section cites are the backticked paths in it that start with bench/results/ (a file, a
    directory: every file under it, or a glob such as `.../matvec*.txt`). A "###" section also
    sees the citations of its "##" parent.
  - In every table row (header rows excepted) every number of every column but the first (the
    row's label) must occur in one of the section's raw files at the precision shown: a raw
    number r matches a shown number s with d decimals when |r - s| <= 0.5 * 10^-d (plus a
    little for binary floats), also after scaling r by 10^3k (ns vs µs vs ms, bytes vs kB vs MB
    vs GB). Thousands separators are ignored. Text inside `backticks` is not a measurement.
  - A column is exempt when a visible line "Derived columns: A; B" right after the table names
    its header (its numbers are computed from checked ones: ratios, percentages, floors), and
    so is a single number followed by a dagger (3.29×†), which the section explains.
  - A row whose first cell contains "[no raw file]" is accepted without a raw file and
    reported as legacy (its section must say why); such a row is never silently skipped.
  - A table in a section that cites no raw file fails unless every row is marked so.
Exit 0 and one summary line when everything traces; exit 1 with one line per number that does
not (section, row, column, number, files searched)."""

import argparse
import glob
import math
import os
import re
import sys

NUM_IN_CELL = re.compile(r"(?<![\w.\-/])(\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.]|-\d)", re.I)
NUM_IN_RAW = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
CITE = re.compile(r"`(bench/results/[^`\s]+)`")
LEGACY = "[no raw file]"


def split_row(line):
    cells = line.strip().strip("|").split("|")
    return [c.strip() for c in cells]


def col_name(cell):
    """A header cell as 'Derived columns:' names it: without bold/code marks."""
    return cell.strip().strip("`*").strip()


def is_separator(line):
    return re.fullmatch(r"\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?", line.strip()) is not None


def sections(text):
    """[(title, level, lines, first line number)] in file order."""
    out, cur = [], ("(preamble)", 1, [], 1)
    for i, line in enumerate(text.splitlines(), 1):
        m = re.match(r"(#{2,3})\s+(.*)", line)
        if m:
            out.append(cur)
            cur = (m.group(2).strip(), len(m.group(1)), [], i)
        cur[2].append(line)
    out.append(cur)
    return out


def tables(lines, first):
    """[(header cells, [(row cells, line number)], derived column names)] of a section."""
    out, i = [], 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and is_separator(lines[i + 1]):
            header, rows, j = split_row(lines[i]), [], i + 2
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                rows.append((split_row(lines[j]), first + j))
                j += 1
            derived = set()
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            if k < len(lines) and lines[k].startswith("Derived columns:"):
                derived = {col_name(c) for c in lines[k][len("Derived columns:"):].strip().rstrip(".").split(";")}
            out.append(([col_name(h) for h in header], rows, derived))
            i = j
        else:
            i += 1
    return out


def cited_files(root, lines):
    files, missing = [], []
    for line in lines:
        for c in CITE.findall(line):
            c = c.rstrip(".,;:)")
            p = os.path.join(root, c)
            if any(ch in c for ch in "*?["):
                got = sorted(glob.glob(p))
            elif os.path.isdir(p):
                got = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs)
            elif os.path.isfile(p):
                got = [p]
            else:
                got = []
            if got:
                files.extend(got)
            else:
                missing.append(c)
    return files, missing


_raw_cache = {}


def raw_numbers(path):
    if path not in _raw_cache:
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        _raw_cache[path] = [float(x) for x in NUM_IN_RAW.findall(text.replace(",", ""))]
    return _raw_cache[path]


def traces(shown, files):
    s = shown.replace(",", "")
    v = float(s)
    d = len(s.split(".")[1]) if "." in s and "e" not in s.lower() else 0
    tol = 0.5 * 10 ** -d * (1 + 1e-9) + 1e-12
    for f in files:
        for r in raw_numbers(f):
            r = abs(r)
            for k in (0, 3, -3, 6, -6, 9, -9):
                if abs(r * 10 ** k - v) <= tol:
                    return True
    return False


def strip_code(cell):
    return re.sub(r"`[^`]*`", " ", cell)


def cell_numbers(cell):
    """[(number text, derived)] of a cell: derived when a dagger follows (after a unit mark)."""
    text = strip_code(cell)
    return [(m.group(1), re.match(r"[x×%]?\s*†", text[m.end():]) is not None) for m in NUM_IN_CELL.finditer(text)]


def check(root, path, verbose):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    errors, n_checked, n_legacy_rows, n_derived = [], 0, 0, 0
    parent_cites = []
    for title, level, lines, first in sections(text):
        files, missing = cited_files(root, lines)
        for m in missing:
            errors.append(f"{path}:{first}: section '{title}': cited raw path `{m}` does not exist")
        if level == 2:
            parent_cites = files
        elif level == 3:
            files = files + parent_cites
        for header, rows, derived in tables(lines, first):
            unknown = derived - set(header)
            for u in sorted(unknown):
                errors.append(f"{path}:{first}: section '{title}': 'Derived columns:' names '{u}', not a column of the table")
            for cells, ln in rows:
                if cells and LEGACY in cells[0]:
                    n_legacy_rows += 1
                    continue
                if not files:
                    errors.append(f"{path}:{ln}: section '{title}': a table row, but the section cites no raw file "
                                  f"under bench/results/ (cite one, or mark the row {LEGACY})")
                    continue
                for ci, cell in enumerate(cells[1:], 1):
                    col = header[ci] if ci < len(header) else f"column {ci + 1}"
                    for num, dagger in cell_numbers(cell):
                        if col in derived or dagger:
                            n_derived += 1
                            continue
                        n_checked += 1
                        if not traces(num, files):
                            errors.append(f"{path}:{ln}: section '{title}', row '{cells[0][:40]}', column '{col[:40]}': "
                                          f"{num} is in none of {len(files)} cited raw files")
                        elif verbose:
                            print(f"ok {title[:30]} / {cells[0][:30]} / {col[:30]}: {num}")
    for e in errors:
        print(e)
    print(f"check_results: {n_checked} numbers traced to raw files, {n_derived} in derived columns, "
          f"{n_legacy_rows} legacy rows marked {LEGACY}; {len(errors)} problems")
    return 1 if errors else 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=os.path.join(here, "RESULTS.md"))
    ap.add_argument("--root", default=os.path.dirname(here), help="the repository (paths are cited from it)")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    return check(a.root, a.results, a.verbose)


if __name__ == "__main__":
    sys.exit(main())
