"""Drives `kforge-run --serve` through "reference_check_only" requests (test/Runner/reference-check-only.test):
the reference's seed-0 outputs checked against sampled output elements, on what the runner holds from an earlier
request (nothing runs) or, when it holds nothing, on a run of seed 0. Prints one line per reply for FileCheck."""
import json
import os
import subprocess
import sys

run, root = sys.argv[1], sys.argv[2]
samples = os.path.join(root, "samples.json")
# The same samples, one value 5% off: a reference that disagrees with them must be caught.
wrong = os.path.join(root, "wrong-samples.json")
doc = json.load(open(samples))
doc["outputs"][0]["values"][3] *= 1.05
json.dump(doc, open(wrong, "w"))

server = subprocess.Popen([run, "--serve", "--reference", os.path.join(root, "reference")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(request):
    server.stdin.write((request if isinstance(request, str) else json.dumps(request)) + "\n")
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    check = reply.get("reference_check", {})
    ran = reply.get("phases_ms", {}).get("candidate_runs", 0) > 0
    print("reply", reply["server"]["request"], reply["status"], "| check:", check.get("status", "-"),
          check.get("elements", "-"), "| ran:", ran, "|", reply.get("reference_outputs", "-"), "|",
          reply.get("reason", ""))
    return reply


reference = os.path.join(root, "reference")
only = {"candidate": reference, "seeds": 1, "reps": 0, "reference_check_only": True}
ask(dict(only, check_reference_samples=samples))  # nothing held yet: seed 0 runs, and is checked
ask(dict(only, check_reference_samples=samples))  # held now: nothing runs
ask(dict(only, check_reference_samples=wrong))
ask(dict(only, candidate=os.path.join(root, "correct"), check_reference_samples=samples))
ask(dict(only))
ask(dict(only, check_reference_samples=samples, reference_check_only="yes"))
server.stdin.close()
print("server exit:", server.wait(timeout=30))
