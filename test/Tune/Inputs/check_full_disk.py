"""Checks a run directory after a resume on a full disk (full-disk.sh): the tuner said why it stopped and did
not abort; the database kept every record it had, and each record is whole; best.json, best.mlir and best/
are either the ones from before or a new export, each file whole."""
import json
import os
import sys

before, after, rc, err_path, free = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
err = open(err_path).read()
where = "free=%s rc=%d: %s" % (free, rc, err[-600:])
assert "LLVM ERROR" not in err and "IO failure" not in err, where
assert 0 <= rc < 128, where  # not killed by a signal (an abort is 134)
if rc != 0:
    assert "kforge-tune: error:" in err and "No space left on device" in err, where

old = open(os.path.join(before, "db.jsonl")).read().splitlines(keepends=True)
new = open(os.path.join(after, "db.jsonl")).read().splitlines(keepends=True)
assert new[: len(old)] == old, "a record from before changed: " + where
for line in new:
    assert line.endswith("\n"), "a record cut short: " + where
    json.loads(line)

records = [json.loads(line) for line in new]
correct = [r for r in records if r["kind"] == "candidate" and r["status"] == "correct"]
best = min(correct, key=lambda r: r["time_ms"])
old_best = json.load(open(os.path.join(before, "best.json")))
now_best = json.load(open(os.path.join(after, "best.json")))
assert now_best in (old_best, best), "best.json is neither the old export nor the database's best: " + where
if rc == 0:
    assert now_best == best, "a finished run exports the database's best: " + where
for name in ("best.mlir", os.path.join("best", "kernel.json")):
    text = open(os.path.join(after, name)).read()
    if now_best == old_best:
        assert text == open(os.path.join(before, name)).read(), name + " changed without best.json: " + where
names = [f for _, _, files in os.walk(after) for f in files]
assert not [f for f in names if ".tmp-" in f], "temporary files left: " + where
print("free %s: exit %d, %d records" % (free, rc, len(new)))
