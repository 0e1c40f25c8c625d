#!/usr/bin/env python3
"""Apply each wrong rule of mutations.toml to rxe_cc/cc_core/ in turn and
check that `cargo test -p cc-core` fails under it; print the survivors and
exit 1 if any. The sources are restored after each, and on any exit."""
import pathlib
import subprocess
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
CORE = HERE.parents[2] / "rxe_cc" / "cc_core"
WORKSPACE = HERE.parents[1]


def cargo_test():
    return subprocess.run(
        ["cargo", "test", "-q", "-p", "cc-core"],
        cwd=WORKSPACE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ).returncode


def main():
    muts = tomllib.loads((HERE / "mutations.toml").read_text())["mutation"]
    for m in muts:
        text = (CORE / m["file"]).read_text()
        n = text.count(m["find"])
        if n != 1:
            sys.exit(f"mutants: {m['file']}: the text of '{m['why']}' occurs {n} times, not once")
    if cargo_test() != 0:
        sys.exit("mutants: cargo test -p cc-core fails on the unmutated sources")
    survivors = []
    for i, m in enumerate(muts, 1):
        path = CORE / m["file"]
        orig = path.read_text()
        try:
            path.write_text(orig.replace(m["find"], m["replace"], 1))
            rc = cargo_test()
        finally:
            path.write_text(orig)
        verdict = "caught" if rc != 0 else "SURVIVED"
        print(f"[{i}/{len(muts)}] {verdict:8} {m['file']}: {m['why']}", flush=True)
        if rc == 0:
            survivors.append(m)
    print(f"mutants: {len(muts) - len(survivors)} of {len(muts)} wrong rules caught")
    sys.exit(1 if survivors else 0)


if __name__ == "__main__":
    main()
