#!/usr/bin/env python3
"""Import circles in the workspace's crates, per file (module) and per room (the first
path segment under src/): `python3 scripts/circles.py src actors/src …` prints each
circle and exits 1 when there is one (`make circles`). It reads `use crate::…`,
`crate::…`, `super::…` and `self::…` paths outside test modules; a module and its own
children do not count as a circle."""
import os, re, sys
from collections import defaultdict

def modules(src):
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if not name.endswith('.rs'):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)[:-3].split(os.sep)
            if rel[-1] in ('mod', 'lib', 'main'):
                rel = rel[:-1]
            files[tuple(rel)] = path
    return files

def strip_tests(text):
    # drop `#[cfg(test)] mod tests { … }` blocks (to the end of file, as they sit last)
    m = re.search(r'#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{', text)
    return text[:m.start()] if m else text

def strip_comments(text):
    text = re.sub(r'//[^\n]*', '', text)
    return re.sub(r'/\*.*?\*/', '', text, flags=re.S)

def expand_use(body):
    """`a::{b, c::{d}}` -> ['a::b', 'a::c::d']"""
    body = body.strip()
    m = re.match(r'^(.*?)\{(.*)\}$', body, re.S)
    if not m:
        return [body]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ''
    for ch in inner:
        if ch == '{': depth += 1
        if ch == '}': depth -= 1
        if ch == ',' and depth == 0:
            parts.append(cur); cur = ''
        else:
            cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            out += [prefix + q for q in expand_use(p)]
    return out

def resolve(mod, path, files):
    segs = [s.strip() for s in path.split('::') if s.strip()]
    segs = [s.split(' as ')[0].strip() for s in segs]
    if not segs: return None
    if segs[0] == 'crate':
        base, rest = [], segs[1:]
    elif segs[0] in ('super', 'self'):
        # a file `a/b.rs` is module a::b; `super` is a
        base = list(mod)
        rest = segs
        while rest and rest[0] in ('super', 'self'):
            if rest[0] == 'super': base = base[:-1]
            rest = rest[1:]
    else:
        return None
    # the longest prefix that is a file
    best = None
    for i in range(len(rest), -1, -1):
        cand = tuple(base + rest[:i])
        if cand in files:
            best = cand; break
    return best

def test_only(files):
    """Modules declared `#[cfg(test)] mod x;` (with their children)."""
    out = set()
    for mod, path in files.items():
        text = open(path).read()
        for m in re.finditer(r'#\[cfg\((?:test|any\(test[^)]*\))\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;', text):
            out.add(mod + (m.group(1),))
    return {m for m in files if any(m[:len(t)] == t for t in out)}

def graph(src):
    files = modules(src)
    for mod in test_only(files):
        del files[mod]
    edges = defaultdict(set)
    for mod, path in files.items():
        text = strip_comments(strip_tests(open(path).read()))
        paths = []
        for m in re.finditer(r'\buse\s+([^;]+);', text):
            paths += expand_use(m.group(1))
        for m in re.finditer(r'\b((?:crate|super)(?:::\w+)+)', text):
            paths.append(m.group(1))
        for p in paths:
            target = resolve(mod, p, files)
            if target is not None and target != mod and not (len(mod) > len(target) and mod[:len(target)] == target) and not (len(target) > len(mod) and target[:len(mod)] == mod):
                edges[mod].add(target)
    return files, edges

def sccs(nodes, edges):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(sorted(comp))
    for v in nodes:
        if v not in index: visit(v)
    return out

def main():
    found = 0
    for src in sys.argv[1:]:
        files, edges = graph(src)
        name = lambda m: '::'.join(m) or '(root)'
        for comp in sccs(list(files), edges):
            found += 1
            print(f'{src} file circle ({len(comp)}): ' + ', '.join(name(m) for m in comp))
        rooms = defaultdict(set)
        for a, targets in edges.items():
            for b in targets:
                ra, rb = a[:1], b[:1]
                if ra and rb and ra != rb:
                    rooms[ra].add(rb)
        for comp in sccs(sorted({m[:1] for m in files if m}), rooms):
            found += 1
            print(f'{src} room circle ({len(comp)}): ' + ', '.join(name(m) for m in comp))
    sys.exit(1 if found else 0)

main()
