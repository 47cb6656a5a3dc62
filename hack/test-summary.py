#!/usr/bin/env python3
"""Prints one closing line 'tests: N passed, N failed, N skipped' from the go
test JSON streams (gotestsum --jsonfile) and vitest/playwright JSON reports
in the given directory, preceded by a line for each test that failed (so the
tail of a CI log names them). Exits 1 when anything failed or nothing ran."""
import json
import pathlib
import sys

d = pathlib.Path(sys.argv[1])
passed = failed = skipped = 0
names = []  # the failed tests, "where: name"
for f in sorted(d.glob("go-*.json")):
    final = {}
    for line in f.read_text().splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("Test") and ev.get("Action") in ("pass", "fail", "skip"):
            final[(ev["Package"], ev["Test"])] = ev["Action"]
    for (pkg, test), a in final.items():
        passed += a == "pass"
        failed += a == "fail"
        skipped += a == "skip"
        if a == "fail":
            names.append(f"{pkg}: {test}")


def playwright_failures(suite, path):
    for spec in suite.get("specs", []):
        if not spec.get("ok", True):
            yield f"{spec.get('file', path)}: {spec.get('title')}"
    for s in suite.get("suites", []):
        yield from playwright_failures(s, s.get("file", path))


for f in sorted(d.glob("web-*.json")):
    try:
        r = json.loads(f.read_text())
    except ValueError:
        failed += 1
        names.append(f"{f.name}: unreadable report")
        continue
    if "numPassedTests" in r:  # vitest (jest-compatible)
        passed += r["numPassedTests"]
        failed += r["numFailedTests"]
        skipped += r.get("numPendingTests", 0) + r.get("numTodoTests", 0)
        for file in r.get("testResults", []):
            for a in file.get("assertionResults", []):
                if a.get("status") == "failed":
                    names.append(f"{pathlib.Path(file.get('name', '')).name}: {a.get('fullName')}")
    elif "stats" in r:  # playwright
        s = r["stats"]
        passed += s.get("expected", 0) + s.get("flaky", 0)
        failed += s.get("unexpected", 0)
        skipped += s.get("skipped", 0)
        for suite in r.get("suites", []):
            names.extend(playwright_failures(suite, suite.get("file", "")))
for n in names[:40]:
    print(f"failed: {n}")
if len(names) > 40:
    print(f"failed: ... and {len(names) - 40} more")
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
