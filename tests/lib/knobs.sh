# rxe_cc's module parameters: their ranges from modinfo, and sysfs reads
# and writes without a process. Sourced by tests/lib.sh.

# cc_knob_ranges: every rxe_cc knob but cc with its valid range, as
# "name lo hi" lines: the ranges glue.c enforces, as modinfo's descriptions
# state them ("[lo..hi], default d"), from the one knob table
# (rxe_cc/cc_core/knobs.rs).
cc_knob_ranges() {
	modinfo -F parm "$(rxecc modules cc-path)" |
		sed -n 's/^\([a-z0-9_]*\):.* \[\([0-9]*\)\.\.\([0-9]*\)\], default [0-9]*$/\1 \2 \3/p'
}

# param_write <name> <value>: 0 if the write was accepted.
# bash's builtin echo, in this shell: it returns 1 on the setter's EINVAL
# (dash's reports every write error as EIO). A process per write took most
# of test_stress_knobs' 818 s under TCG.
param_write() { echo "$2" 2>"$TEST_OUT/write.err" >"/sys/module/rxe_cc/parameters/$1"; }

# param_read <name>: a knob's value, read without a process.
param_read() {
	local v
	read -r v <"/sys/module/rxe_cc/parameters/$1"
	echo "$v"
}
