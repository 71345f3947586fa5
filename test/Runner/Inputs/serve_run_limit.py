"""A long-lived runner whose candidate's run is stopped at 10 x the cutoff (its executor killed) goes on: the next
request gets a fresh executor and a verdict (test/Runner/serve-run-limit.test). Prints a line per reply."""
import json
import os
import subprocess
import sys

run, root = sys.argv[1], sys.argv[2]
server = subprocess.Popen([run, "--serve", "--reference", os.path.join(root, "reference")],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def ask(request):
    server.stdin.write(json.dumps(request) + "\n")
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    print("reply", reply["server"]["request"], reply["status"], "|", reply.get("reason", "")[:60])
    return reply


candidate = os.path.join(root, "candidate")
first = ask({"candidate": candidate, "seeds": 1, "reps": 0, "cutoff_ms": 1})
second = ask({"candidate": candidate, "seeds": 2, "reps": 0})
third = ask({"candidate": candidate, "seeds": 1, "reps": 0, "cutoff_ms": 1})
print("one server:", first["server"]["pid"] == second["server"]["pid"] == third["server"]["pid"] == server.pid)
server.stdin.close()
print("server exit:", server.wait(timeout=60))
