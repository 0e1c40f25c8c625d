#!/usr/bin/env python3
"""portsum.py FILE KEY [GLOB...]: sum KEY over the ports in FILE (the
output of `rxecc port stats --json`, one port per line) whose names match
a GLOB (all ports if none). KEY may name a field of the port's ingress
record as ingress.KEY; ports without one count 0. max:KEY prints the
largest value instead of the sum; list:KEY prints dev=value for each port
whose value is not 0."""
import fnmatch
import json
import sys

path, key, globs = sys.argv[1], sys.argv[2], sys.argv[3:] or ["*"]
mode, _, key = key.rpartition(":")
vals, devs = [], []
with open(path) as f:
    for line in f:
        p = json.loads(line)
        if not any(fnmatch.fnmatch(p["dev"], g) for g in globs):
            continue
        v = p
        for k in key.split("."):
            v = (v or {}).get(k) if isinstance(v, dict) else None
        vals.append(v or 0)
        devs.append(p["dev"])
if mode == "list":
    print(" ".join(f"{d}={v}" for d, v in zip(devs, vals) if v))
else:
    print((max if mode == "max" else sum)(vals) if vals else 0)
