#!/usr/bin/env python3
"""Before spending device time: compiles, on this machine, the first N schedules kforge-tune's heuristic would
try on the GPU for every benchmark task (realistic shapes), and reports those that do not compile, with the
stage and message. A schedule that fails here would fail as a trial on the GPU machine too.

    build/venv/bin/python scripts/gpu/precheck.py [--first 6] [--tasks a,b] [--out /tmp/precheck]
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "tasks"))
import tasks  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", type=int, default=6, help="schedules per task")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--out", default="/tmp/kforge-precheck")
    parser.add_argument("--bin", default=os.path.join(os.environ.get("KFORGE_BUILD_DIR", os.path.join(ROOT, "build")), "bin"))
    args = parser.parse_args()
    chosen = [t for t in tasks.TASKS if not args.tasks or t.name in args.tasks.split(",")]
    failures = 0
    for task in chosen:
        directory = os.path.join(args.out, task.name)
        os.makedirs(directory, exist_ok=True)
        payload = os.path.join(directory, "payload.mlir")
        with open(payload, "w") as f:
            f.write(task.mlir(task.shape))
        dry = subprocess.run([os.path.join(args.bin, "kforge-tune"), payload, "--target", "gpu", "--dry-run",
                              str(args.first)], capture_output=True, text=True)
        if dry.returncode != 0:
            print(f"{task.name}: dry run failed: {dry.stderr.strip()}")
            failures += 1
            continue
        for i, line in enumerate(dry.stdout.splitlines()):
            proposal = json.loads(line)
            schedule = os.path.join(directory, f"s{i}.json")
            with open(schedule, "w") as f:
                json.dump(proposal["actions"], f)
            library = os.path.join(directory, f"s{i}.mlir")
            with open(library, "w") as f:
                rendered = subprocess.run([os.path.join(args.bin, "kforge-tune"), payload, "--target", "gpu",
                                           "--render", schedule], stdout=f, stderr=subprocess.PIPE, text=True)
            started = time.time()
            # As kforge-tune compiles them: wgmma exists only in the architecture-specific sm_90a target.
            chip = ["--chip", "sm_90a"] if any(a["kind"] == "wgmma" for a in proposal["actions"]) else []
            built = subprocess.run([os.path.join(args.bin, "kforge-compile"), payload, "--target", "gpu", "--recipe",
                                    library, "-o", os.path.join(directory, f"s{i}")] + chip,
                                   capture_output=True, text=True)
            ok = rendered.returncode == 0 and built.returncode == 0
            failures += not ok
            why = "" if ok else " | " + (rendered.stderr or built.stderr).strip().splitlines()[-1][:200]
            print(f"{task.name} #{i} {'ok  ' if ok else 'FAIL'} {time.time() - started:5.1f} s  {proposal['description']}{why}",
                  flush=True)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
