# What the tests read from rxecc's report.json.

# rj <label> <key>: a metric of report.json ("null" if absent). The file
# is flattened once ("label key value" lines, report.flat): a Python start
# takes over a second in the guest, and a test reads dozens of metrics.
rj() {
	local json=$TEST_OUT/report.json flat=$TEST_OUT/report.flat
	[ "$flat" -nt "$json" ] || python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])):
    for k, v in r.items():
        if not isinstance(v, (list, dict)):
            print(r["label"], k, "null" if v is None else v)' "$json" >"$flat" || return 1
	awk -v l="$1" -v k="$2" '$1 == l && $2 == k {print $3; found = 1; exit}
		END {if (!found) {print "rj: no " k " for " l " in report.json" > "/dev/stderr"; exit 1}}' "$flat"
}

# sj <summary.json> <run> <key>: a metric of an `rxecc run` summary
# ("null" if null, "absent" if the run or key is not there), a whole
# number without ".0". Flattened once, beside it (summary.flat).
sj() {
	local json=$1 flat=${1%.json}.flat
	[ "$flat" -nt "$json" ] || python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])):
    for k, v in r.items():
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        if not isinstance(v, (list, dict)):
            print(r["label"], k, "null" if v is None else v)' "$json" >"$flat" || return 1
	awk -v r="$2" -v k="$3" '$1 == r && $2 == k {print $3; f = 1; exit} END {if (!f) print "absent"}' "$flat"
}

# measured_row <file> <run> [name=value ...]: one measured row (a JSON
# object per line) for `rxecc spread --measured`, which tables the rows:
# per run, median [min-max] over the rows that repeat it. A value that is
# not a number (a failed measurement) is null.
measured_row() {
	local f=$1 run=$2
	shift 2
	jq -nc --arg run "$run" '$ARGS.positional
		| map(capture("^(?<k>[^=]+)=(?<v>.*)$") | {(.k): (.v | tonumber? // null)})
		| add + {run: $run}' --args "$@" >>"$f"
}

# measured_table <rows> [rxecc spread args]: the rows' table on stdout,
# its cells as JSON beside the rows (<rows>.json for <rows>.jsonl).
measured_table() {
	local f=$1
	shift
	rxecc spread --measured "$f" --json "${f%.jsonl}.json" "$@"
}

# tb_wire_check <pcap> <json>: `rxecc check`'s judgement of a capture
# (every ICRC, the packets by opcode, the INT shims and their records)
# into <json>, and its totals on one line; 1 if there is no RoCEv2 packet
# or a bad ICRC or shim.
tb_wire_check() {
	rxecc check --json "$1" >"$2" || return 1
	jq -c '{packets, icrc_bad, opcodes, int_shims, int_hops, int_bad}' "$2"
	jq -e '.packets > 0 and .icrc_bad == 0' "$2" >/dev/null
}
