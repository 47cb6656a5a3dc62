#!/usr/bin/env python3
"""Prints one closing line 'tests: N passed, N failed, N skipped' from the go
test JSON streams (gotestsum --jsonfile) and vitest/playwright JSON reports
in the given directory. Exits 1 when anything failed or nothing ran."""
import json
import pathlib
import sys

d = pathlib.Path(sys.argv[1])
passed = failed = skipped = 0
for f in sorted(d.glob("go-*.json")):
    final = {}
    for line in f.read_text().splitlines():
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if ev.get("Test") and ev.get("Action") in ("pass", "fail", "skip"):
            final[(ev["Package"], ev["Test"])] = ev["Action"]
    for a in final.values():
        passed += a == "pass"
        failed += a == "fail"
        skipped += a == "skip"
for f in sorted(d.glob("web-*.json")):
    try:
        r = json.loads(f.read_text())
    except ValueError:
        failed += 1
        continue
    if "numPassedTests" in r:  # vitest (jest-compatible)
        passed += r["numPassedTests"]
        failed += r["numFailedTests"]
        skipped += r.get("numPendingTests", 0) + r.get("numTodoTests", 0)
    elif "stats" in r:  # playwright
        s = r["stats"]
        passed += s.get("expected", 0) + s.get("flaky", 0)
        failed += s.get("unexpected", 0)
        skipped += s.get("skipped", 0)
print(f"tests: {passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed == 0 else 0)
