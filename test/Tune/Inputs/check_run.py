"""Checks a kforge-tune run: the --json summary and the run directory agree, the best kernel is verified
correct and faster than the untransformed payload, and every record is well formed."""
import json
import os
import sys

summary = json.load(open(sys.argv[1]))
run_dir = sys.argv[2]
records = [json.loads(line) for line in open(os.path.join(run_dir, "db.jsonl"))]
baseline = [r for r in records if r["kind"] == "baseline"]
candidates = [r for r in records if r["kind"] == "candidate"]
assert len(baseline) == 1 and baseline[0]["status"] == "correct", baseline
assert len(candidates) == summary["trials"], (len(candidates), summary["trials"])
for r in candidates:
    for key in ("id", "schedule", "schedule_hash", "status", "score", "payload_hash", "target", "versions"):
        assert key in r, (key, r)
    assert r["payload_hash"] == baseline[0]["payload_hash"]
    if r["status"] == "correct":
        assert r["time_ms"] > 0 and r["score"] >= 0.4 - 1e-9 + min(0.0, r["score"] - 0.4), r
assert len({r["schedule_hash"] for r in candidates}) == len(candidates), "a schedule was tried twice"
# The default runner is one long-lived `kforge-run --serve`: the baseline and every measured trial went to the
# same process, request after request (a crash would restart it; none is expected here).
measured = [r for r in candidates if "run_s" in r]
assert measured and all("runner" in r for r in measured), measured[:1]
assert len({r["runner"]["pid"] for r in measured}) == 1, {r["runner"]["pid"] for r in measured}
# The baseline (every seed verified, then timed) was its first request: the seeds' inputs and outputs are drawn
# and computed once, in that process, for the baseline and every trial.
base = baseline[0]["run"]
assert base["server"]["pid"] == measured[0]["runner"]["pid"] and base["server"]["request"] == 1, base.get("server")
assert [r["runner"]["request"] for r in measured] == list(range(2, len(measured) + 2))
best = summary["best"]
correct = [r for r in candidates if r["status"] == "correct"]
assert best["time_ms"] == min(r["time_ms"] for r in correct)
assert best["speedup_vs_baseline"] > 1.0, best
for name in ("best.mlir", "best.json", "report.md", "report.svg", "run.json", "payload.mlir",
             "best/kernel.so", "best/kernel.json", "best/kernel.scheduled.mlir"):
    assert os.path.exists(os.path.join(run_dir, name)), name
svg = open(os.path.join(run_dir, "report.svg")).read()
assert svg.startswith("<svg") and "<polyline" in svg
print("run ok: best %.2fx over the untransformed payload in %d trials" % (best["speedup_vs_baseline"], len(candidates)))
