"""Drives one `kforge-run --serve` session (test/Runner/serve-cpu.test): requests go in one line at a time,
replies are checked as they come, and the seed cache's files are deleted between requests to show that a
long-lived runner keeps inputs and reference outputs in memory. Prints one line per reply for FileCheck."""
import json
import os
import shutil
import subprocess
import sys

run, root = sys.argv[1], sys.argv[2]
cache = os.path.join(root, "cache")
server = subprocess.Popen([run, "--serve", "--reference", os.path.join(root, "reference"), "--cache-dir", cache],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(request):
    server.stdin.write((request if isinstance(request, str) else json.dumps(request)) + "\n")
    server.stdin.flush()
    line = server.stdout.readline()
    if not line:
        return None
    reply = json.loads(line)
    print("reply", reply.get("server", {}).get("request"), reply["status"], reply.get("reason", ""))
    return reply


def seed_files():
    return sorted(f for _, _, files in os.walk(cache) for f in files)


first = ask({"candidate": os.path.join(root, "correct"), "seeds": 2, "reps": 10})
assert "median_ms" in first["timing"], first
print("files after the first request:", len(seed_files()))
shutil.rmtree(cache)
output = os.path.join(root, "second.json")
second = ask({"candidate": os.path.join(root, "correct"), "seeds": 2, "reps": 0, "output": output})
print("files after the second request:", len(seed_files()))
# Where the judge's time went: the first request ran the reference, the second read its outputs (and the
# inputs) from memory and ran no reference at all.
phases = ("load", "inputs", "copies", "candidate_runs", "reference_runs", "compare", "timing")
print("phases:", sorted(first["phases_ms"]) == sorted(phases),
      all(first["phases_ms"][p] >= 0 for p in phases),
      first["phases_ms"]["reference_runs"] > 0, first["phases_ms"]["timing"] > 0,
      second["phases_ms"]["reference_runs"] == 0, second["phases_ms"]["timing"] == 0)
assert json.load(open(output))["status"] == "correct"
ask({"candidate": os.path.join(root, "zeros"), "seeds": 2, "reps": 0})
ask("this is not JSON")
ask({"seeds": 2})
ask({"candidate": os.path.join(root, "correct"), "reps": 3})
ask({"candidate": os.path.join(root, "missing")})
last = ask({"candidate": os.path.join(root, "correct"), "seeds": 1, "reps": 0})
print("one process:", first["server"]["pid"] == last["server"]["pid"] == server.pid)
# A crash costs the candidate's executor, not the server (the judge): a reply says so and the next
# request gets a fresh executor in the same server.
crash = ask({"candidate": os.path.join(root, "out-of-bounds"), "seeds": 1, "reps": 0})
after = ask({"candidate": os.path.join(root, "correct"), "seeds": 1, "reps": 0, "nonce": "n-42", "id": 7})
print("same server after the crash:", after["server"]["pid"] == server.pid)
print("echoed:", after.get("nonce"), after.get("id"))
server.stdin.close()
print("server exit:", server.wait(timeout=30))
