#!/usr/bin/env python3
"""Vendors the parts of GitHub's OpenAPI description that the sandbox serves.

    npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
    python3 tests/data/github/openapi/extract.py package/generated/api.github.com.json

reads the sandbox's routes (`crates/sweepgate-sandbox/src/routes/*.rs`), keeps
every operation of the description whose path has the same shape as a route
and method it serves, and every component those operations reference
(transitively), and writes `api.github.com.sandbox.json` beside this script.
Nothing is changed: the kept parts are byte-for-byte the description's.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))


def sandbox_routes():
    out = []
    for f in sorted(glob.glob(os.path.join(ROOT, "crates/sweepgate-sandbox/src/routes/*.rs"))):
        text = open(f).read()
        for m in re.finditer(r'\.route\(\s*"([^"]+)",\s*(.*?)\)\s*(?=\.route|\n\s*}|$)', text, re.S):
            path, handlers = m.group(1), m.group(2)
            if path.startswith("/_sandbox/"):
                continue
            for method in re.findall(r"\b(get|post|patch|put|delete)\(", handlers):
                out.append((method, path))
    return out


def shape(path):
    """Segments with every parameter as `*`; a trailing catch-all as `**`."""
    segs = []
    for s in path.strip("/").split("/"):
        if s.startswith("{*"):
            segs.append("**")
        elif s.startswith("{"):
            segs.append("*")
        else:
            segs.append(s)
    return segs


def same_shape(route, api):
    r, a = shape(route), shape(api)
    if r and r[-1] == "**":
        return len(a) == len(r) and a[:-1] == r[:-1] and a[-1] == "*"
    return r == a


def refs(node, found):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                found.add(v)
            else:
                refs(v, found)
    elif isinstance(node, list):
        for v in node:
            refs(v, found)


def main():
    spec = json.load(open(sys.argv[1]))
    routes = sandbox_routes()
    paths = {}
    for api_path, ops in spec["paths"].items():
        for method, path in routes:
            if method in ops and same_shape(path, api_path):
                paths.setdefault(api_path, {})[method] = ops[method]
    components = {}
    pending = set()
    refs(paths, pending)
    seen = set()
    while pending:
        ref = pending.pop()
        if ref in seen:
            continue
        seen.add(ref)
        _, kind, name = ref.lstrip("#/").split("/", 2)
        node = spec["components"][kind][name]
        components.setdefault(kind, {})[name] = node
        refs(node, pending)
    out = {
        "openapi": spec["openapi"],
        "info": spec["info"],
        "paths": dict(sorted(paths.items())),
        "components": {k: dict(sorted(v.items())) for k, v in sorted(components.items())},
    }
    dest = os.path.join(HERE, "api.github.com.sandbox.json")
    with open(dest, "w") as f:
        json.dump(out, f, indent=1, sort_keys=False)
        f.write("\n")
    ops = sum(len(v) for v in paths.values())
    print(f"{dest}: {ops} operations on {len(paths)} paths, {len(seen)} components")


if __name__ == "__main__":
    main()
