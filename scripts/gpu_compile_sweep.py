#!/usr/bin/env python3
"""Compile the heuristic's first GPU proposals for many payloads, on the CPU (no GPU needed), and say which fail.

For each payload: kforge-tune --dry-run N (the first N proposals), each rendered and compiled with
kforge-compile --target gpu, then lowered to PTX by kforge-opt --kforge-lower-to-nvvm. A proposal the validator
accepted that does not compile is a defect (on the GPU machine it would be a failed trial); a payload with no
proposal gets only its naive kernel. Nothing runs: correctness is the runner's business on the device.

  scripts/gpu_compile_sweep.py [--build build] [--proposals 3] [--work DIR] PAYLOAD.mlir...
Prints one line per payload (proposals, compiled, first failure) and exits 1 if any proposal failed to compile."""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile


def run(command, timeout=600):
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"
    except OSError as error:  # a tool missing or not executable: said, not a traceback
        return 127, "", f"cannot run {command[0]}: {error}"


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:240]
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:240] if lines else "(no message)"


def sweep(payload, bin_dir, proposals, work):
    rc, out, err = run([str(bin_dir / "kforge-tune"), str(payload), "--target", "gpu", "--policy", "heuristic",
                        "--dry-run", str(proposals)])
    if rc != 0:
        return 0, 0, [f"dry-run failed: {first_error(err)}"]
    schedules = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    compiled, failures = 0, []
    for index, proposal in enumerate(schedules):
        def named(suffix, base=f"{payload.stem}.{index}"):
            return work / (base + suffix)
        actions = named(".json")
        actions.write_text(json.dumps(proposal["actions"]))
        rc, library, err = run([str(bin_dir / "kforge-tune"), str(payload), "--target", "gpu", "--render",
                                str(actions)])
        if rc != 0:
            failures.append(f"{proposal['description']}: render: {first_error(err)}")
            continue
        recipe = named(".lib.mlir")
        recipe.write_text(library)
        out_dir = named(".out")
        rc, _, err = run([str(bin_dir / "kforge-compile"), str(payload), "--recipe", str(recipe), "--target", "gpu",
                          "-o", str(out_dir)])
        if rc != 0:
            failures.append(f"{proposal['description']}: compile: {first_error(err)}")
            continue
        rc, _, err = run([str(bin_dir / "kforge-opt"), str(out_dir / "kernel.scheduled.mlir"),
                          f"--kforge-lower-to-nvvm=format=isa dump-dir={named('.ptx')}", "-o", "/dev/null"])
        if rc != 0:
            failures.append(f"{proposal['description']}: PTX: {first_error(err)}")
            continue
        compiled += 1
    return len(schedules), compiled, failures


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("payloads", nargs="+", type=pathlib.Path)
    parser.add_argument("--build", type=pathlib.Path, default=pathlib.Path("build"))
    parser.add_argument("--proposals", type=int, default=3)
    parser.add_argument("--work", type=pathlib.Path)
    args = parser.parse_args(argv)
    bin_dir = args.build / "bin"
    work = args.work or pathlib.Path(tempfile.mkdtemp(prefix="kforge-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    bad = 0
    for payload in args.payloads:
        count, compiled, failures = sweep(payload, bin_dir, args.proposals, work)
        status = "FAILED" if failures else ("ok" if count else "NO PROPOSAL")
        bad += status != "ok"
        print(f"{payload.stem}: {status}: {compiled} of {count} compiled" +
              (f"; first failure: {failures[0]}" if failures else ""), flush=True)
    print(f"{len(args.payloads) - bad} of {len(args.payloads)} payloads: every proposal compiled", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
