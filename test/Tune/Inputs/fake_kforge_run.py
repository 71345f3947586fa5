#!/usr/bin/env python3
"""A stand-in for kforge-run in kforge-tune's tests (test/Tune/l2-flush.test): it reports an H200-like GPU,
appends each command line to $FAKE_KFORGE_RUN_LOG and answers every candidate "correct" in 1 ms without
running anything, so what kforge-tune asks of its runner can be checked on a machine without a GPU.
FAKE_THREADS_PER_SM sets the resident threads per multiprocessor it reports (2048 unless set: sm_86 has 1536)."""
import json
import os
import sys

args = sys.argv[1:]
with open(os.environ["FAKE_KFORGE_RUN_LOG"], "a") as log:
    log.write(" ".join(args) + "\n")
if args[:1] == ["--device-info"]:
    print(json.dumps({"gpu": True, "name": "fake GPU", "chip": "sm_90", "multiprocessors": 132,
                      "max_threads_per_block": 1024, "max_threads_per_multiprocessor": int(os.environ.get("FAKE_THREADS_PER_SM", "2048")),
                      "shared_bytes_per_block": 49152, "shared_bytes_per_block_optin": 232448,
                      "registers_per_block": 65536, "registers_per_multiprocessor": 65536,
                      "l2_bytes": 52428800}))
    sys.exit(0)


def report(candidate):
    return {"candidate": candidate, "status": "correct", "seeds": [],
            "timing": {"median_ms": 1.0, "min_ms": 1.0, "max_ms": 1.0, "reps": 10, "clock": "fake"}}


if "--serve" in args:
    for line in sys.stdin:
        request = json.loads(line)
        answer = report(request["candidate"])
        # Like the real judge: the reply echoes the request's nonce and id, or kforge-tune refuses it.
        answer.update({k: request[k] for k in ("nonce", "id") if k in request})
        if "output" in request:
            with open(request["output"], "w") as out:
                json.dump(answer, out)
        print(json.dumps(answer), flush=True)
    sys.exit(0)
answer = report(args[args.index("--candidate") + 1])
if "--output" in args:
    with open(args[args.index("--output") + 1], "w") as out:
        json.dump(answer, out)
print(json.dumps(answer))
