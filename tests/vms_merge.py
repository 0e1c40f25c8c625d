#!/usr/bin/env python3
"""Merges the recordings of a testbed of several guests onto one clock.

  vms_merge.py VMS_OUT MERGED_DIR

Each guest's `rxecc record` directory (VMS_OUT/rec.<guest>) is on that
guest's CLOCK_MONOTONIC; VMS_OUT/offset.<guest> ("offset_ns rtt_ns", from
tests/clock_probe.py) is h0's guest's clock minus its own. Every row's t_ns
is moved onto h0's guest's clock, plus one constant for every guest when
that would leave a time below 0 (each guest's clock starts at its own
boot: under VMS_CLOCK=virtual a sender's ran 8 s ahead of h0's guest's),
and the rows of each of rxecc record's CSV files are concatenated in time
order, so that `rxecc report` reads the merge as one recording. Prints the largest error the offsets allow (half
the probe's round trip), in ms.
"""
import csv
import glob
import os
import sys

FILES = ["rates.csv", "halts.csv", "ports.csv", "qps.csv", "deadlocks.csv"]


def main(vms_out, merged):
    os.makedirs(merged, exist_ok=True)
    recs = sorted(glob.glob(os.path.join(vms_out, "rec.*")))
    if not recs:
        sys.exit(f"vms_merge: no recordings (rec.*) in {vms_out}")
    shift, err = {}, 0
    for r in recs:
        g = r.rsplit("rec.", 1)[1]
        path = os.path.join(vms_out, f"offset.{g}")
        try:
            off, rtt = (int(x) for x in open(path).read().split())
        except (OSError, ValueError) as e:
            sys.exit(f"vms_merge: no clock offset for guest {g} ({path}: {e})")
        shift[r] = off
        err = max(err, rtt / 2)
    tables = {}
    for name in FILES:
        header, rows = None, []
        for r in recs:
            p = os.path.join(r, name)
            if not os.path.exists(p):
                continue
            with open(p, newline="") as f:
                rd = csv.reader(f)
                h = next(rd, None)
                if h is None:
                    continue
                if header is None:
                    header = h
                elif h != header:
                    sys.exit(f"vms_merge: {p}: header differs from the other guests'")
                for row in rd:
                    row[0] = str(int(row[0]) + shift[r])
                    rows.append(row)
        if header is not None:
            tables[name] = (header, rows)
    # Times are unsigned in rxecc's files.
    low = min((int(row[0]) for _, rows in tables.values() for row in rows), default=0)
    for name, (header, rows) in tables.items():
        if low < 0:
            for row in rows:
                row[0] = str(int(row[0]) - low)
        rows.sort(key=lambda row: int(row[0]))
        with open(os.path.join(merged, name), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(header)
            w.writerows(rows)
    print(f"{err / 1e6:.2f}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
