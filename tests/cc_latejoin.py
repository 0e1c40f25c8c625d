#!/usr/bin/env python3
"""FNCC's late joiner, from the recordings of `rxecc run`
testbed/experiments/latejoin.toml:

  cc_latejoin.py <T in us> <label>=<record dir> ...

For each run: the joiner's first sample with bytes sent (t_join), the
first flow's rate then, and the first sample after t_join at which that
rate is below 90% of it: the time to the first slowdown, in ms and in T.
The sampling interval bounds the resolution; it is printed too."""
import csv
import sys


def flows(path):
    """{qp: [(t_ns, rate_bps, tx_bytes)]} of the QPs that sent."""
    out = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            out.setdefault(r["qp"], []).append((int(r["t_ns"]), int(r["rate_bps"]), int(r["tx_bytes"])))
    return {q: sorted(v) for q, v in out.items() if v and v[-1][2] > 0}


def first_sent(series):
    return next((t for t, _, b in series if b > 0), None)


def main():
    t_us = float(sys.argv[1])
    print("%-6s %12s %14s %16s %10s" % ("cc", "interval ms", "rate @join Mb/s", "first slowdown ms", "in T"))
    for arg in sys.argv[2:]:
        label, d = arg.split("=", 1)
        fl = flows(d + "/qps.csv")
        if len(fl) < 2:
            print("%-6s %s" % (label, "fewer than two flows recorded"))
            continue
        (q1, s1), (q2, s2) = sorted(fl.items(), key=lambda kv: first_sent(kv[1]))[:2]
        t_join = first_sent(s2)
        ts = sorted({t for t, _, _ in s1})
        interval = (ts[-1] - ts[0]) / max(len(ts) - 1, 1) / 1e6
        before = [r for t, r, _ in s1 if t <= t_join]
        if not before:
            print("%-6s %s" % (label, "no rate of the first flow before the join"))
            continue
        r0 = before[-1]
        slow = next((t for t, r, _ in s1 if t > t_join and r < 0.9 * r0), None)
        if slow is None:
            print("%-6s %12.1f %14.1f %16s %10s" % (label, interval, r0 / 1e6, "never", "-"))
        else:
            ms = (slow - t_join) / 1e6
            print("%-6s %12.1f %14.1f %16.1f %10.2f" % (label, interval, r0 / 1e6, ms, ms * 1000 / t_us))


if __name__ == "__main__":
    main()
