#!/usr/bin/env python3
"""wgfuse structure check: the layers of docs/architecture.md, enforced.

    util  <-  gpu (+ the generated kernels/ headers)  <-  {bench, sim, llm}  <-  serve  <-  cli

Two views of the same rule, both run by the build (CMake target wgf_structure) and by
tests/structure/test_structure.py, which plants violations and expects this script to fail:

  includes  every #include "..." of src/**/*.{c,h} and include/wgfuse/*.h:
            - goes to the same part or a lower layer, never up or sideways (bench -> sim);
            - uses another part's header only if it is public (include/wgfuse/), generated
              for every layer (kernels/ids.h, kernels/constants.h) or util's (src/util/ is the
              library's shared toolbox); src/<part>/*.h of any other part is private to it;
            - an installed header (include/wgfuse/) includes only installed headers;
            - no cycle among headers.
  objects   (--objects LIB=FILE, FILE listing LIB's object files, one a line) the symbols
            each object file uses and defines (nm):
            - an object uses symbols of its own library or of a lower layer only (the static
              libraries link in that order, but an object pulled in by another path can hide a
              back-edge from the linker);
            - no cycle among the object files: foo.c -> bar.c -> foo.c (each calls the other)
              means the two are one concept split in the wrong place; the usual fix is to move
              what both need into a file beneath them.

Exit 0 and one summary line when the tree obeys; exit 1 with one line per violation
otherwise. --stamp FILE is touched on success (the build's up-to-date marker)."""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

# ---- the layers: the one table to edit when a part or a public header is added ----------
LAYER = {"util": 0, "gpu": 1, "bench": 2, "sim": 2, "llm": 2, "serve": 3, "cli": 4}
# include/wgfuse/<name>.h -> owning part (first matching pattern wins)
PUBLIC_HEADERS = [
    (r"status\.h|half\.h", "util"),
    (r"gpu(_\w+)?\.h", "gpu"),
    (r"bench(_\w+)?\.h", "bench"),
    (r"sim(_\w+)?\.h", "sim"),
    (r"llm(_\w+)?\.h|tokenizer(_\w+)?\.h|chat_template\.h|chat\.h", "llm"),
    (r"serve(_\w+)?\.h", "serve"),
]
GENERATED = {"kernels/ids.h": "gpu", "kernels/constants.h": "gpu"}  # build/generated/
SHARED_PARTS = {"util"}  # parts whose src/<part>/*.h every layer above may include
# the CMake target that holds each part's objects (the CLI is the executable wgfuse)
LIBRARY_PARTS = {"util": "wgfuse_util", "gpu": "wgfuse_gpu", "bench": "wgfuse_bench", "sim": "wgfuse_sim",
                 "llm": "wgfuse_llm", "serve": "wgfuse_serve", "cli": "wgfuse"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE_RE = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
# system headers confined to one file: MPI is the CLI's seam for `sim` (src/cli/sim_mpi.c), so
# the library, and every other CLI file, stay free of it
CONFINED_SYSTEM_HEADERS = {"mpi.h": "src/cli/sim_mpi.c"}


def public_part(name):
    for pattern, part in PUBLIC_HEADERS:
        if re.fullmatch(pattern, name):
            return part
    return None


class Checker:
    def __init__(self, root):
        self.root = root
        self.errors = []
        self.n_includes = 0

    def error(self, msg):
        self.errors.append(msg)

    # ---- includes ----------------------------------------------------------------------
    def files(self):
        out = []
        for base in ("src", "include/wgfuse"):
            top = os.path.join(self.root, base)
            for dirpath, _, names in os.walk(top):
                for n in sorted(names):
                    if n.endswith((".c", ".h")):
                        out.append(os.path.relpath(os.path.join(dirpath, n), self.root))
        return sorted(out)

    @staticmethod
    def owner(rel):
        """(part, kind) of a repository-relative path; kind: public | private | shared."""
        parts = rel.split("/")
        if parts[0] == "include":
            return public_part(parts[-1]), "public"
        if parts[0] == "src" and len(parts) >= 3:
            return parts[1], "shared" if parts[1] in SHARED_PARTS else "private"
        return None, None

    def resolve(self, src_rel, inc):
        """Repository-relative path (or a generated name) an include names, with its owner."""
        if inc in GENERATED:
            return inc, GENERATED[inc], "shared"
        first = inc.split("/")[0]
        if first == "wgfuse":
            rel = os.path.join("include", inc)
            if not os.path.exists(os.path.join(self.root, rel)):
                self.error(f"{src_rel}: #include \"{inc}\": no such public header")
                return None, None, None
            part = public_part(os.path.basename(inc))
            if part is None:
                self.error(f"{src_rel}: #include \"{inc}\": public header in no layer "
                           f"(add it to PUBLIC_HEADERS in scripts/check_structure.py)")
                return None, None, None
            return rel, part, "public"
        if first in LAYER:
            rel = os.path.join("src", inc)
            if not os.path.exists(os.path.join(self.root, rel)):
                self.error(f"{src_rel}: #include \"{inc}\": no such file under src/")
                return None, None, None
            if not inc.endswith(".h"):
                self.error(f"{src_rel}: #include \"{inc}\": includes a source file")
            return rel, first, "shared" if first in SHARED_PARTS else "private"
        self.error(f"{src_rel}: #include \"{inc}\": not a header of src/<part>/, include/wgfuse/ "
                   f"or the generated kernels/")
        return None, None, None

    def check_includes(self):
        graph = defaultdict(set)
        for rel in self.files():
            part, kind = self.owner(rel)
            if part is None or part not in LAYER:
                self.error(f"{rel}: in no layer (parts: {', '.join(sorted(LAYER))})")
                continue
            with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as f:
                for ln, line in enumerate(f, 1):
                    sm = SYSTEM_INCLUDE_RE.match(line)
                    if sm and sm.group(1) in CONFINED_SYSTEM_HEADERS and rel != CONFINED_SYSTEM_HEADERS[sm.group(1)]:
                        self.error(f"{rel}:{ln}: #include <{sm.group(1)}>: only "
                                   f"{CONFINED_SYSTEM_HEADERS[sm.group(1)]} may include it")
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    self.n_includes += 1
                    inc = m.group(1)
                    target, tpart, tkind = self.resolve(f"{rel}:{ln}", inc)
                    if target is None:
                        continue
                    where = f"{rel}:{ln}: #include \"{inc}\""
                    if kind == "public" and tkind != "public":
                        self.error(f"{where}: an installed header includes a header that is not installed")
                    if tpart != part:
                        if LAYER[tpart] > LAYER[part]:
                            self.error(f"{where}: {part} (layer {LAYER[part]}) reaches up into {tpart} "
                                       f"(layer {LAYER[tpart]})")
                        elif LAYER[tpart] == LAYER[part]:
                            self.error(f"{where}: {part} and {tpart} are siblings (layer {LAYER[part]}); "
                                       f"what both need belongs in a layer beneath them")
                        elif tkind == "private":
                            self.error(f"{where}: {inc} is private to src/{tpart}/ (use its public header "
                                       f"in include/wgfuse/)")
                    if target.endswith(".h"):
                        graph[rel].add(target)
        for cycle in cycles(graph):
            self.error("include cycle: " + " -> ".join(cycle + [cycle[0]]))

    # ---- object files ------------------------------------------------------------------
    def check_objects(self, libs):
        defined, used, lib_of = {}, defaultdict(set), {}
        for lib, objs in libs.items():
            for obj in objs:
                lib_of[obj] = lib
                out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
                for line in out.splitlines():
                    f = line.split()
                    if len(f) < 2:
                        continue
                    name, t = f[0], f[1]
                    if t == "U":
                        used[obj].add(name)
                    elif t in "TDBRCVWGSi":
                        defined[name] = obj
        layer_of = {lib: LAYER[part] for part, lib in LIBRARY_PARTS.items()}
        for lib in libs:
            if lib not in layer_of:
                self.error(f"--objects {lib}: not a library of the layers ({', '.join(sorted(layer_of))})")
                return 0
        graph, why = defaultdict(set), {}
        for obj, names in used.items():
            for name in sorted(names):
                dep = defined.get(name)
                if dep is None or dep == obj:
                    continue
                a, b = lib_of[obj], lib_of[dep]
                la, lb = layer_of[a], layer_of[b]
                if a != b and lb >= la:
                    self.error(f"{short(obj)} ({a}) uses {name} from {short(dep)} ({b}): "
                               f"{'up' if lb > la else 'sideways'} across the layers")
                graph[obj].add(dep)
                why.setdefault((obj, dep), name)
        for cycle in cycles(graph):
            steps = [f"{short(x)} --{why[(x, y)]}--> " for x, y in zip(cycle, cycle[1:] + cycle[:1])]
            self.error("file cycle: " + "".join(steps) + short(cycle[0]))
        return len(lib_of)


def short(obj):
    """src/gpu/buffer.c for .../wgfuse_gpu.dir/src/gpu/buffer.c.o."""
    m = re.search(r"\.dir/(.*)\.o$", obj)
    return m.group(1) if m else os.path.basename(obj)


def cycles(graph):
    """The strongly connected components with more than one node (Tarjan, iterative), each
    as one cycle through its nodes in a stable order."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    nodes = sorted(set(graph) | {w for vs in graph.values() for w in vs})
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(path_through(graph, set(comp)))
    return out


def path_through(graph, comp):
    """A cycle inside the component, starting at its smallest node (for a readable message)."""
    start = min(comp)
    prev, queue, seen = {}, [start], {start}
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return list(reversed(path))
            if w in comp and w not in seen:
                seen.add(w)
                prev[w] = v
                queue.append(w)
    return sorted(comp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, help="the repository (holds src/ and include/)")
    ap.add_argument("--objects", action="append", default=[], metavar="LIB=FILE",
                    help="LIB (wgfuse_util ... wgfuse_llm, or wgfuse for the CLI) and a file listing its "
                         "object files, one a line")
    ap.add_argument("--stamp", help="touched on success")
    a = ap.parse_args()

    c = Checker(a.root)
    c.check_includes()
    libs = {}
    for spec in a.objects:
        lib, _, path = spec.partition("=")
        with open(path, encoding="utf-8") as f:
            libs[lib] = [x.strip() for x in f.read().split("\n") if x.strip()]
    n_obj = c.check_objects(libs) if libs else 0
    if c.errors:
        for e in c.errors:
            print(f"structure: {e}", file=sys.stderr)
        print(f"structure: {len(c.errors)} violation(s) of the layers in docs/architecture.md", file=sys.stderr)
        return 1
    print(f"structure: {len(c.files())} files, {c.n_includes} includes, {n_obj} objects: "
          f"layers respected, no file cycles")
    if a.stamp:
        with open(a.stamp, "w", encoding="utf-8") as f:
            f.write("ok\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
