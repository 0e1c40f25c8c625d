#!/usr/bin/env python3
"""cc_medians.py T_US REPORT.JSON...: the incast's metrics as medians over
repeated bench rounds (each REPORT.JSON is one round's `rxecc report
--json`: none, DCQCN and ACC side by side), and ACC's ratios against DCQCN
per round and as the median of those. One round is noisy under TCG (ACC's
convergence ranged 6-24 T); the median of several is what to quote."""
import json
import statistics
import sys

t_us, paths = float(sys.argv[1]), sys.argv[2:]
rounds = []
for p in paths:
    with open(p) as f:
        rounds.append({r["label"]: r for r in json.load(f)})


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def conv_periods(r):
    """Periods T to converge; a run that never converged counts as its
    whole window, so the median is a lower bound for it (marked '>')."""
    if r["converge_periods"] is not None:
        return r["converge_periods"], False
    return (r["t1_ms"] - r["t0_ms"]) * 1000 / t_us, True


def settle_periods(r):
    """Periods T to the first entry into the band that lasted (rxecc
    report's STAY_PERIODS); a run that never settled counts as its whole
    window, as for convergence. Older reports have no such field: None."""
    if r.get("settle_periods") is not None:
        return r["settle_periods"], False
    return (r["t1_ms"] - r["t0_ms"]) * 1000 / t_us, True


def fmt(v, spec):
    return "-" if v is None else spec % v


labels = [l for l in ("none", "dcqcn", "dcqcn-sim", "acc", "acc-inc", "hpcc", "fncc", "fncc-cw", "icc", "timely", "dctcp", "swift") if all(l in r for r in rounds)]
print("median of %d rounds (each round: %s one after another)" % (len(rounds), ", ".join(labels)))
print("%-9s %10s %9s %8s %10s %6s %8s %8s %7s %6s" % (
    "cc", "converge T", "settled T", "in band", "tput Mb/s", "Jain", "peak KB", "mean KB", "pauses", "drops"))
for l in labels:
    runs = [r[l] for r in rounds]
    conv = [conv_periods(r) for r in runs]
    never = sum(1 for _, n in conv if n)
    c = med([v for v, _ in conv]) if never < len(runs) else None
    cs = "never" if c is None else ("%s%.1f" % (">" if never * 2 >= len(runs) else "", c))
    settle = [settle_periods(r) for r in runs]
    snever = sum(1 for _, n in settle if n)
    st = med([v for v, _ in settle]) if snever < len(runs) else None
    ss = "never" if st is None else ("%s%.1f" % (">" if snever * 2 >= len(runs) else "", st))
    print("%-9s %10s %9s %7.0f%% %10.1f %6.3f %8.1f %8.1f %7.0f %6.0f" % (
        l, cs, ss, med([r["in_band"] for r in runs]) * 100, med([r["throughput_mbps"] for r in runs]),
        med([r["jain"] for r in runs]), med([r["peak_queue_bytes"] for r in runs]) / 1024,
        med([r["mean_queue_bytes"] for r in runs]) / 1024, med([r["pauses"] for r in runs]),
        med([r["drops"] for r in runs])))
    if l != "none":
        print("        per round: converge T %s; settled T %s; pauses %s" % (
            " ".join(">%.0f" % v if n else "%.1f" % v for v, n in conv),
            " ".join(">%.0f" % v if n else "%.1f" % v for v, n in settle),
            " ".join(str(r["pauses"]) for r in runs)))

if "acc" in labels and "dcqcn" in labels:
    conv_r, pause_r = [], []
    for r in rounds:
        (a, an), (d, dn) = conv_periods(r["acc"]), conv_periods(r["dcqcn"])
        conv_r.append(None if an or a == 0 else d / a)
        pause_r.append(None if r["acc"]["pauses"] == 0 else r["dcqcn"]["pauses"] / r["acc"]["pauses"])
    print("DCQCN / ACC per round: convergence %s; pauses %s" % (
        " ".join(fmt(x, "%.1fx") for x in conv_r), " ".join(fmt(x, "%.1fx") for x in pause_r)))
    print("median: convergence %s (target >= 10x; a DCQCN that never converged counts its window),"
          " pauses %s (target >= 5x); rounds meeting both: %d of %d" % (
              fmt(med(conv_r), "%.1fx"), fmt(med(pause_r), "%.1fx"),
              sum(1 for c, p in zip(conv_r, pause_r) if c and p and c >= 10 and p >= 5), len(rounds)))
    set_r = []
    for r in rounds:
        (a, an), (d, dn) = settle_periods(r["acc"]), settle_periods(r["dcqcn"])
        set_r.append(None if an or a == 0 else d / a)
    print("DCQCN / ACC settled (in band for good) per round: %s; median %s" % (
        " ".join(fmt(x, "%.1fx") for x in set_r), fmt(med(set_r), "%.1fx")))

for l in ("hpcc", "fncc"):
    if l not in labels:
        continue
    # HPCC's claim (SIGCOMM'19): about 95% utilisation with a near-empty
    # queue; FNCC's (2024): a shorter queue than HPCC's. The queue in MTUs
    # uses the testbed's 4096-byte RoCE MTU.
    runs = [r[l] for r in rounds]
    p50 = med([r.get("p50_queue_bytes") for r in runs])
    p95 = med([r.get("p95_queue_bytes") for r in runs])
    print("%s: utilisation %s of the bottleneck (HPCC paper: ~95%%); queue p50 %s, p95 %s" % (
        l.upper(), fmt(med([r["utilisation"] for r in runs]), "%.2f"),
        "-" if p50 is None else "%.1f KB (%.1f MTU)" % (p50 / 1024, p50 / 4096),
        "-" if p95 is None else "%.1f KB (%.1f MTU)" % (p95 / 1024, p95 / 4096)))

if "fncc" in labels and "hpcc" in labels:
    for key, what in (("mean_queue_bytes", "mean queue"), ("peak_queue_bytes", "peak queue")):
        q = [(r["hpcc"].get(key), r["fncc"].get(key)) for r in rounds]
        red = [None if not h else 1 - f / h for h, f in q]
        paper = (" (paper: 37.5% at the first hop, 29.5% in the middle, 38.5% at the last)"
                 if key == "mean_queue_bytes" else "")
        print("FNCC vs HPCC, %s lower by %s per round; median %s%s" % (
            what, " ".join(fmt(x and x * 100, "%.0f%%") for x in red), fmt(med(red) and med(red) * 100, "%.0f%%"), paper))

if "icc" in labels:
    # ICC's claim (CMC 2023): fewer PFC pauses than DCQCN (>= 56%) and than
    # HPCC-like INT schemes when bursts meet long flows.
    for other in ("dcqcn", "hpcc"):
        if other in labels:
            pr = [None if not r[other]["pauses"] else 1 - r["icc"]["pauses"] / r[other]["pauses"] for r in rounds]
            print("ICC vs %s: pauses lower by %s per round; median %s" % (
                other.upper(), " ".join(fmt(x and x * 100, "%.0f%%") for x in pr), fmt(med(pr) and med(pr) * 100, "%.0f%%")))
