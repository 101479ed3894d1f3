#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check the shape of alloc_bench's JSON (used by `make -C bench quick`).

    check_json.py FILE

Fails unless FILE is {"userspace": {allocator: {figure: value}}, "meta": {...}}
with the four default allocators, exactly the ten figure names, numbers
(never null: a failure to measure is a failure of the smoke run), and the
libsecmem backend recorded in meta.
"""
import json
import numbers
import sys

ALLOCATORS = {"libsecmem", "sodium_malloc", "openssl_secure", "glibc_malloc"}
FIGURES = {
    "alloc_free_ns_32", "alloc_free_ns_64", "alloc_free_ns_256",
    "alloc_free_ns_4096", "alloc_free_ns_64_pair", "alloc_free_ns_64_t1",
    "alloc_free_ns_64_t2",
    "live_32b_max", "mappings", "rss_bytes_per_secret",
}


def check(doc):
    errors = []
    if set(doc) != {"userspace", "meta"}:
        errors.append(f"top-level keys {sorted(doc)}, want meta and userspace")
    user = doc.get("userspace", {})
    missing = ALLOCATORS - set(user)
    if missing:
        errors.append(f"allocators missing: {sorted(missing)}")
    for name, figs in user.items():
        if set(figs) != FIGURES:
            errors.append(f"{name}: figures {sorted(figs)}")
        for fig, value in figs.items():
            if not isinstance(value, numbers.Real) or isinstance(value, bool):
                errors.append(f"{name}.{fig} = {value!r}, not a number")
            elif value <= 0:
                errors.append(f"{name}.{fig} = {value}, not positive")
    meta = doc.get("meta", {})
    if meta.get("libsecmem_backend") in (None, "", "unknown", "none"):
        errors.append("meta.libsecmem_backend not recorded")
    for name, info in meta.get("allocators", {}).items():
        for fig, msg in info.get("errors", {}).items():
            errors.append(f"{name}.{fig} failed: {msg}")
    return errors


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], encoding="utf-8") as f:
        doc = json.load(f)
    errors = check(doc)
    for e in errors:
        print(f"check_json: {sys.argv[1]}: {e}", file=sys.stderr)
    if errors:
        return 1
    print(f"check_json: {sys.argv[1]}: ok "
          f"({len(doc['userspace'])} allocators, libsecmem backend "
          f"{doc['meta']['libsecmem_backend']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
