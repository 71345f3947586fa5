"""Checks an LLM-policy run: the API key was sent to the endpoint and appears nowhere else; which policies
proposed the trials; the best kernel beats the untransformed payload."""
import glob
import json
import os
import sys

run, key = sys.argv[1], sys.argv[2]
requests = [json.loads(line) for line in open(run + ".requests.jsonl")]
sent = any(key in json.dumps(r["headers"]) for r in requests)
leaks = []
for path in glob.glob(run + "/**", recursive=True) + [run + ".out", run + ".err"]:
    if os.path.isfile(path) and key.encode() in open(path, "rb").read():
        leaks.append(path)
records = [json.loads(line) for line in open(run + "/db.jsonl")]
candidates = [r for r in records if r["kind"] == "candidate"]
policies = sorted({r["policy"] for r in candidates})
correct = [r for r in candidates if r["status"] == "correct"]
best = max((r["speedup_vs_baseline"] for r in correct), default=0)
print("key sent in a header: %s" % sent)
print("key found in: %s" % (leaks or "nothing"))
print("requests: %d to %s" % (len(requests), sorted({r["path"] for r in requests})))
print("trials: %d by %s" % (len(candidates), " ".join(policies)))
print("llm trials: %d" % len([r for r in candidates if r["policy"] == "llm"]))
print("faster than the untransformed payload: %s" % (best > 1.0))
