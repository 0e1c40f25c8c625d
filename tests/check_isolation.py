#!/usr/bin/env python3
"""Each test file stands alone: tb_run_test runs a test in a shell that has
tests/lib.sh (with tests/lib/*.sh and testbed/netns.sh) and the test's own
file, and whatever that file sources. A test file that calls a function, or
reads a variable, that only another script defines would fail there, in the
guest; this finds it on the host (make lint). Exit 1 naming each use."""

import re
import sys
from pathlib import Path

TOP = Path(__file__).resolve().parent.parent
TESTS = TOP / "tests"
SOURCE = re.compile(r'^\s*\.\s+"\$RXECC_TOP/([^"]+)"', re.M)
FUNC = re.compile(r"^([a-z_][a-z_0-9]*)\(\)\s*\{", re.M)
VAR = re.compile(r"^([A-Z_][A-Z_0-9]*)=", re.M)
# Where a command starts: line start, after ; & | ( { ! or $(, or a keyword.
CMD = r"(?:^|[;&|({!]|\$\(|\b(?:then|do|else|if|while|until|time)\s)\s*"


def code(path):
    """The file's lines without comments (a # at a line's start only)."""
    return "\n".join(l for l in path.read_text().splitlines() if not l.lstrip().startswith("#"))


def defs(path):
    src = path.read_text()
    return set(FUNC.findall(src)), set(VAR.findall(src))


def closure(path, seen=None):
    """The file and every script it sources, transitively."""
    seen = set() if seen is None else seen
    if path in seen or not path.exists():
        return seen
    seen.add(path)
    for rel in SOURCE.findall(path.read_text()):
        closure(TOP / rel, seen)
    return seen


def main():
    base = closure(TESTS / "lib.sh")
    for lib in sorted((TESTS / "lib").glob("*.sh")):
        base |= closure(lib)
    # Tests and the experiment helpers they may source; the runners (bench,
    # demo, ...) are never sourced into a test's shell.
    scripts = sorted(TESTS.glob("test_*.sh")) + sorted(TESTS.glob("cc_*.sh"))
    errors = []
    for test in sorted(TESTS.glob("test_*.sh")):
        have = base | closure(test)
        body = code(test)
        # Its own names (a helper may be defined inside a test, indented).
        own = set(re.findall(r"^\s*([a-z_][a-z_0-9]*)\(\)\s*\{", "\n".join(p.read_text() for p in have), re.M))
        for other in scripts:
            if other in have:
                continue
            funcs, vars_ = defs(other)
            for f in sorted(funcs - own):
                if re.search(CMD + re.escape(f) + r"(?=\s|$|\)|;)", body, re.M):
                    errors.append(f"{test.name}: calls {f}, which only {other.name} defines")
            for v in sorted(vars_):
                if re.search(r"\$\{?" + re.escape(v) + r"\b", body):
                    errors.append(f"{test.name}: reads {v}, which only {other.name} sets")
    for e in errors:
        print(f"check_isolation: {e} (move it to tests/lib/, or source that file)", file=sys.stderr)
    return 1 if errors or not suite_lists_every_test() else 0


def suite_lists_every_test():
    """Every test has its "#@" line right above it (tests/lib/suite.sh):
    suite or by-name, and nothing but the words suite.sh knows."""
    ok = True
    for test in sorted(TESTS.glob("test_*.sh")):
        lines = test.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^(test_[a-z0-9_]+)\(\)\s*\{", line)
            if not m:
                continue
            meta = lines[i - 1] if i > 0 else ""
            words = meta[2:].split() if meta.startswith("#@") else None
            bad = [] if words is None else [w for w in words if not re.fullmatch(
                r"suite|by-name|debug=skip|(debug_)?timeout=[0-9]+", w)]
            if words is None or bad or len({"suite", "by-name"} & set(words)) != 1:
                print(f"check_isolation: {test.name}: {m.group(1)} needs a line \"#@ suite|by-name [debug=skip] "
                      f"[timeout=S] [debug_timeout=S]\" right above it (tests/lib/suite.sh)"
                      + (f"; unknown: {' '.join(bad)}" if bad else ""), file=sys.stderr)
                ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
