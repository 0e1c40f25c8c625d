# rxe_cc's per-QP counters (debugfs) sampled into a poll file, and what
# the tests read from it. Sourced by tests/lib.sh.

poll_qps() { # <file>: sample every QP's counters until killed
	while :; do
		awk '{n = split(FILENAME, p, "/"); print p[n - 1], $1, $2}' \
			/sys/kernel/debug/rxe_cc/qps/*/stats 2>/dev/null || true
		sleep 0.1
	done >>"$1"
}

# qp_marks <poll file> <qp pattern> <counter>: the counter summed over the
# QPs whose name (<dev>-qp<N>) matches the awk regex, each at its last
# sample (QPs vanish from debugfs when destroyed).
qp_marks() {
	awk -v re="$2" -v k="$3" '$1 ~ re && $2 == k {v[$1] = $3}
		END {for (q in v) s += v[q]; print s + 0}' "$1"
}

# overlap <poll file> <qp>: "<first> <last>", the poll samples in which
# some other QP of the same device first received data and in which <qp>
# got its last byte (a sample ends where a QP's line repeats).
overlap() {
	python3 - "$1" "$2" <<'PY'
import sys
dev = sys.argv[2].split("-")[0] + "-"
samples, cur = [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) != 3 or f[1] != "rx_bytes" or not f[0].startswith(dev):
        continue
    if f[0] in cur:
        samples.append(cur)
        cur = {}
    cur[f[0]] = int(f[2])
samples.append(cur)
me = sys.argv[2]
first = next((i for i, s in enumerate(samples) if any(v > 0 for q, v in s.items() if q != me)), len(samples))
last = max((s.get(me, 0), -i) for i, s in enumerate(samples))
print(first, -last[1])
PY
}

# largest_qp <poll file> <dev>: the QP on <dev> that received the most
# bytes (on h3: F1, whose flow is ten times a burst's).
largest_qp() {
	awk -v d="$2-qp" 'index($1, d) == 1 && $2 == "rx_bytes" {v[$1] = $3}
		END {for (q in v) if (best == "" || v[q] > v[best]) best = q; print best}' "$1"
}
