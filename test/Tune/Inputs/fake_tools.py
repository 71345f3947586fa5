#!/usr/bin/env python3
"""Stands in for kforge-compile or kforge-run (by the name it is called under, next to a copy of kforge-tune) and
runs the real tool from $REAL_TOOLS, after these changes:
- $FAKE_GPU=1: kforge-run --device-info reports an H200-like GPU, and "--target gpu" compiles become "--target
  cpu" with the GPU recipe dropped (candidates are the untransformed loops): kforge-tune's GPU path on a
  machine without a GPU. $FAKE_NAIVE_PAYLOAD, when set, is what a --naive build (the search's reference)
  compiles instead of the payload: a deliberately wrong reference.
- $FAKE_CRASH_CANDIDATE=N: candidate N compiles $FAKE_CRASH_PAYLOAD instead (without its recipe), e.g. a kernel
  that segfaults.
- $FAKE_SLOW_CANDIDATE=N: candidate N's compile first sleeps $FAKE_SLOW_SECONDS (default 3) seconds, as a
  schedule whose unrolled tile takes ptxas half a minute does.
- $FAKE_FAIL_CANDIDATES=1: every candidate's compile fails with one message (a payload no schedule gets past).
- $FAKE_FAIL_SAMPLES=1: kforge-compile --sample-outputs fails as it does on an op the interpreter has no meaning
  for (the reference check is then skipped, with the reason).
- $FAKE_DISTURBED_TIMINGS=N: the first N timed runs of the baseline report what kforge-run reports when its clock
  disagreed with the executor's on every attempt (a machine busy with other work): failed, "timing_disturbed".
Each command line is appended to $FAKE_LOG, and under --serve each request line too ("request {...}"): the
real server runs behind this one, which passes the lines through (and changes the baseline's timing replies
as above)."""
import json
import os
import subprocess
import sys
import time

tool = os.path.basename(sys.argv[0])
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(tool + " " + " ".join(args) + "\n")
real = os.environ["REAL_TOOLS"] + "/" + tool

gpu = os.environ.get("FAKE_GPU") == "1"
if tool == "kforge-run" and gpu and args[:1] == ["--device-info"]:
    print(json.dumps({"gpu": True, "name": "fake GPU", "chip": "sm_90", "multiprocessors": 132,
                      "max_threads_per_block": 1024, "max_threads_per_multiprocessor": 2048,
                      "shared_bytes_per_block": 49152, "shared_bytes_per_block_optin": 232448,
                      "registers_per_block": 65536, "registers_per_multiprocessor": 65536,
                      "l2_bytes": 52428800}))
    sys.exit(0)


def drop_recipe():
    if "--recipe" in args:
        at = args.index("--recipe")
        del args[at:at + 2]


if (tool == "kforge-compile" and os.environ.get("FAKE_FAIL_CANDIDATES") == "1" and "-o" in args
        and "/candidates/" in args[args.index("-o") + 1]):
    sys.stderr.write(args[0] + ":5:10: error: 'linalg.generic' reads or writes memory on the host (fake)\n")
    sys.exit(1)

if tool == "kforge-compile" and os.environ.get("FAKE_FAIL_SAMPLES") == "1" and "--sample-outputs" in args:
    sys.stderr.write(args[0] + ":7:12: error: 'fake.op' has no meaning in kforge's interpreter (fake)\n")
    sys.exit(1)

slow = os.environ.get("FAKE_SLOW_CANDIDATE")
if tool == "kforge-compile" and slow and "-o" in args and args[args.index("-o") + 1].endswith("/candidates/" + slow):
    time.sleep(float(os.environ.get("FAKE_SLOW_SECONDS", "3")))

crash = os.environ.get("FAKE_CRASH_CANDIDATE")
if tool == "kforge-compile" and crash and "-o" in args and args[args.index("-o") + 1].endswith("/candidates/" + crash):
    args[0] = os.environ["FAKE_CRASH_PAYLOAD"]
    drop_recipe()
if tool == "kforge-compile" and gpu and "--target" in args and args[args.index("--target") + 1] == "gpu":
    args[args.index("--target") + 1] = "cpu"
    drop_recipe()
    if "--naive" in args:
        args.remove("--naive")
        if os.environ.get("FAKE_NAIVE_PAYLOAD"):
            args[0] = os.environ["FAKE_NAIVE_PAYLOAD"]


def disturbed(candidate, reps):
    """True for the first $FAKE_DISTURBED_TIMINGS timed baseline runs (counted in a file beside $FAKE_LOG)."""
    limit = int(os.environ.get("FAKE_DISTURBED_TIMINGS", "0"))
    if tool != "kforge-run" or reps == 0 or not candidate.endswith("/baseline"):
        return False
    counter = os.environ["FAKE_LOG"] + ".disturbed"
    seen = int(open(counter).read()) if os.path.exists(counter) else 0
    with open(counter, "w") as f:
        f.write(str(seen + 1))
    return seen < limit


def disturb(report):
    report.pop("timing", None)
    report.update(status="failed", timing_disturbed=True,
                  reason="timing: the timing disagrees with the judge's clock (fake)")


if tool == "kforge-run" and "--serve" in args:
    server = subprocess.Popen([real] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        with open(os.environ["FAKE_LOG"], "a") as log:
            log.write("request " + line.strip() + "\n")
        server.stdin.write(line)
        server.stdin.flush()
        reply = server.stdout.readline()
        if not reply:
            break
        try:
            request = json.loads(line)
        except ValueError:
            request = {}
        if isinstance(request, dict) and disturbed(str(request.get("candidate", "")), request.get("reps", 1)):
            report = json.loads(reply)
            disturb(report)
            reply = json.dumps(report) + "\n"
            if request.get("output"):
                json.dump(report, open(request["output"], "w"))
        sys.stdout.write(reply)
        sys.stdout.flush()
    server.stdin.close()
    sys.exit(server.wait())

if "--reps" in args and disturbed(args[args.index("--candidate") + 1], int(args[args.index("--reps") + 1])):
    rc = subprocess.call([real] + args)
    output = args[args.index("--output") + 1]
    report = json.load(open(output))
    disturb(report)
    json.dump(report, open(output, "w"))
    sys.exit(1 if rc == 0 else rc)  # kforge-run's status for any verdict but correct
os.execv(real, [real] + args)
