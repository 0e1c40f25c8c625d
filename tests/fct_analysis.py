#!/usr/bin/env python3
"""The HPCC simulator's analysis/fct_analysis.py, ported to Python 3 for
the tests: it reads fct.txt as the original does (awk's filter on dport and
start + fct < T, slowdown = max(1, fct / standalone), `sort -n -k 2`) and
prints its table for one file. Two changes, both also in `rxecc fct report`:
every flow is kept (the original's split('\\n')[:-2] drops the largest), and
an empty bucket is skipped (the original fails on it). Ties in size are
ordered by slowdown, as `rxecc fct report` orders them.

usage: fct_analysis.py FCT_TXT [-t 0|1|2] [-s STEP] [-T TIME_LIMIT_NS]
"""
import argparse


def get_pctl(a, p):
    i = int(len(a) * p)
    return a[i]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("-t", dest="type", type=int, default=0)
    ap.add_argument("-s", dest="step", type=int, default=5)
    ap.add_argument("-T", dest="time_limit", type=int, default=None)
    args = ap.parse_args()
    rows = []
    with open(args.file) as f:
        for line in f:
            c = line.split()
            if len(c) != 8:
                continue
            dport, size, start, fct, alone = int(c[3]), int(c[4]), int(c[5]), int(c[6]), int(c[7])
            if args.type == 0 and dport != 100 or args.type == 1 and dport != 200:
                continue
            if args.time_limit is not None and not start + fct < args.time_limit:
                continue
            slow = fct / alone
            rows.append((size, 1.0 if slow < 1 else slow))
    rows.sort()
    n, step = len(rows), args.step
    for i in range(0, 100, step):
        lo, hi = i * n // 100, min(i + step, 100) * n // 100
        if lo >= hi:
            continue
        d = rows[lo:hi]
        fct = sorted(x[1] for x in d)
        print("%.3f %d\t%.3f %.3f %.3f" % (i / 100.0, d[-1][0], get_pctl(fct, 0.5),
                                           get_pctl(fct, 0.95), get_pctl(fct, 0.99)))


if __name__ == "__main__":
    main()
