#!/usr/bin/env python3
"""Print the circles of lib/*.c files that depend on each other in a loop.

A file A depends on a file B when A (or A's own header) includes B's header,
or when A calls a non-static pgr_*/pgrest_* function defined in B.  The
symbol scan is a rough regex one: good enough to see the knots, not a C
parser.  The circles are the strongly connected components of that graph
with more than one file (Tarjan's algorithm).

Usage: scripts/include_circles.py [LIB_DIR]   (default: lib next to scripts/)
Exit status 0 always: this is a report, not a check.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# A definition: a line at column 0 that is not static, ending in the
# function name and "(", whose declaration is followed by a body (no ';'
# before the next '{').
DEFINITION = re.compile(r'^(?!static\b)(?![ \t#/])[^;{}()\n]*?\b((?:pgr|pgrest)_\w+)\s*\(', re.M)
USE = re.compile(r'\b((?:pgr|pgrest)_\w+)\s*\(')
COMMENT = re.compile(r'/\*.*?\*/|//[^\n]*', re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def strip(text):
    return STRING.sub('""', COMMENT.sub(' ', text))


def read(path):
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read()


def sources(lib):
    out = []
    for root, _dirs, files in os.walk(lib):
        out += [os.path.join(root, f) for f in files if f.endswith('.c')]
    return sorted(out)


def defined_functions(code):
    names = set()
    for m in DEFINITION.finditer(code):
        rest = code[m.end():]
        semi, brace = rest.find(';'), rest.find('{')
        if brace != -1 and (semi == -1 or brace < semi):
            names.add(m.group(1))
    return names


def resolve_include(name, from_dir, lib):
    for base in (from_dir, lib):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.exists(path):
            return path
    return None


def dependencies(lib):
    files = sources(lib)
    code = {f: strip(read(f)) for f in files}
    owner = {}
    for f in files:
        for name in defined_functions(code[f]):
            owner.setdefault(name, f)
    deps = {f: set() for f in files}
    for f in files:
        own_header = f[:-2] + '.h'
        texts = [read(f)]
        if os.path.exists(own_header):
            texts.append(read(own_header))
        for text in texts:
            for inc in INCLUDE.findall(text):
                header = resolve_include(inc, os.path.dirname(f), lib)
                if header and header != own_header:
                    target = header[:-2] + '.c'
                    if target in deps and target != f:
                        deps[f].add(target)
        for name in USE.findall(code[f]):
            target = owner.get(name)
            if target and target != f:
                deps[f].add(target)
    return deps


def strongly_connected(deps):
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(deps[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    lib = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, '..', 'lib')
    lib = os.path.normpath(lib)
    deps = dependencies(lib)
    circles = sorted((c for c in strongly_connected(deps) if len(c) > 1),
                     key=lambda c: c[0])
    for comp in circles:
        names = [os.path.relpath(f, lib) for f in comp]
        print(f'{len(names)} files: ' + ' '.join(names))
        members = set(comp)
        for f in comp:
            inside = sorted(os.path.relpath(d, lib) for d in deps[f] & members)
            print(f'    {os.path.relpath(f, lib)} -> {" ".join(inside)}')
    print(f'{len(circles)} circle(s)')


if __name__ == '__main__':
    main()
