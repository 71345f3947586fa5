#!/usr/bin/env python3
"""Stands in for kforge-compile and kforge-run next to a copy of kforge-tune (forged_session.py tune).

As kforge-compile: runs the real one ($FORGED_REAL_COMPILE); when a candidate (a compile with --recipe, not
--schedule-only) was built, its library is replaced by the next forged one of $FORGED_PLAN (comma-separated
artifact directories, taken in order; the position is kept in $FORGED_STATE), so kforge-tune verifies and
times forged code exactly as it would a compiled candidate.
As kforge-run: execs the real one ($FORGED_REAL_RUN).
Both append to $FORGED_ENV_LOG whether their environment holds $FORGED_SECRET (the API key a child of
kforge-tune should not inherit).
"""
import fcntl
import json
import os
import shutil
import subprocess
import sys

tool = os.path.basename(sys.argv[0])
secret = os.environ.get("FORGED_SECRET", "")
# This stand-in's own settings (the secret among them) are not part of what kforge-tune handed down, and the
# real tools do not get them.
inherited = {k: v for k, v in os.environ.items() if not k.startswith("FORGED_")}
with open(os.environ["FORGED_ENV_LOG"], "a") as log:
    log.write(json.dumps({"tool": tool, "secret": bool(secret) and any(secret in v for v in inherited.values())})
              + "\n")
if tool == "kforge-run":
    os.execve(os.environ["FORGED_REAL_RUN"], [os.environ["FORGED_REAL_RUN"]] + sys.argv[1:], inherited)

args = sys.argv[1:]
rc = subprocess.call([os.environ["FORGED_REAL_COMPILE"]] + args, env=inherited)
if rc != 0 or "--recipe" not in args or "--schedule-only" in args or "-o" not in args:
    sys.exit(rc)
out = args[args.index("-o") + 1]
name = args[args.index("--name") + 1] if "--name" in args else "kernel"
plan = [p for p in os.environ.get("FORGED_PLAN", "").split(",") if p]
with open(os.environ["FORGED_STATE"], "a+") as state:
    fcntl.flock(state, fcntl.LOCK_EX)
    state.seek(0)
    taken = len(state.read().split())
    state.write("%s\n" % out)
if taken < len(plan):
    forged = plan[taken]
    library = json.load(open(os.path.join(forged, "kernel.json")))["library"]
    shutil.copyfile(os.path.join(forged, library), os.path.join(out, name + ".so"))
sys.exit(0)
