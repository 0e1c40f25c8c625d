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
    """Every test defined is in ALL_TESTS, or its name is in one of
    suite.sh's comments (a test left out says so); every name in
    ALL_TESTS is defined."""
    suite = (TESTS / "lib" / "suite.sh").read_text()
    listed = set(re.findall(r"\btest_[a-z0-9_]+", re.search(r"ALL_TESTS=\(([^)]*)\)", suite).group(1)))
    said = set(re.findall(r"\btest_[a-z0-9_]+", "\n".join(l for l in suite.splitlines() if l.lstrip().startswith("#"))))
    defined = set()
    for test in TESTS.glob("test_*.sh"):
        defined |= set(re.findall(r"^(test_[a-z0-9_]+)\(\)\s*\{", test.read_text(), re.M))
    ok = True
    for t in sorted(defined - listed - said):
        print(f"check_isolation: {t} is in no suite list: add it to ALL_TESTS in tests/lib/suite.sh, or say there why not", file=sys.stderr)
        ok = False
    for t in sorted(listed - defined):
        print(f"check_isolation: tests/lib/suite.sh lists {t}, which no tests/test_*.sh defines", file=sys.stderr)
        ok = False
    return ok


if __name__ == "__main__":
    sys.exit(main())
