#!/usr/bin/env python3
"""PyTorch's kernels for a benchmark task under Nsight Compute, beside scripts/gpu/profile.sh's profile of
kforge's: what eager PyTorch or torch.compile launches for one call of the task, on the GPU machine.

    ncu --profile-from-start off ... python3 scripts/gpu/profile_torch.py TASK {eager,compile}
    scripts/gpu/profile_torch.py TASK MODE --ncu OUT   (runs ncu itself: OUT/details.txt, OUT/torch.ncu-rep)
    scripts/gpu/profile_torch.py TASK compile --code OUT
        (keeps what torch.compile generated: Inductor's Python source and Triton's PTX and launch metadata,
        under OUT/inductor and OUT/triton, with OUT/kernels.txt listing each kernel's PTX file, warps and
        the loads and stores it issues: what to compare kforge's PTX against)

The task's PyTorch definition (bench/tasks/tasks.py) runs on its full shape: warm-up calls first (torch.compile
compiles in them), then exactly one call between cudaProfilerStart and cudaProfilerStop, so ncu sees only the
kernels of that call. Profiling only: nothing here is timed or verified (bench/run does both).
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SECTIONS = ["SpeedOfLight", "WarpStateStats", "SchedulerStats", "InstructionStats", "Occupancy", "LaunchStats",
            "ComputeWorkloadAnalysis", "MemoryWorkloadAnalysis"]


def load_task(name):
    spec = importlib.util.spec_from_file_location("tasks", os.path.join(ROOT, "bench", "tasks", "tasks.py"))
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    by_name = {t.name: t for t in tasks.TASKS}
    if name not in by_name:
        sys.exit(f"profile_torch.py: no task '{name}' (tasks: {', '.join(sorted(by_name))})")
    return by_name[name]


def run_once_profiled(task, mode):
    import torch
    # A TF32 task's matmuls run in TF32 for PyTorch as for kforge (bench/run's rule); every other fp32 task's never.
    tf32 = getattr(task, "precision", "ieee") == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    fn = eval(task.torch, {"torch": torch})
    if mode == "compile":
        fn = torch.compile(fn)
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(task.dtype, torch.float32)
    generator = torch.Generator(device="cuda").manual_seed(0)
    inputs = [torch.randn(s, generator=generator, device="cuda").to(dtype) for s in task.input_shapes(task.shape)]
    with torch.no_grad():
        for _ in range(3):
            fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        fn(*inputs)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def run_ncu(task, mode, out):
    ncu = shutil.which("ncu") or "/usr/local/cuda/bin/ncu"
    if not os.path.exists(ncu):
        sys.exit("profile_torch.py: no ncu on this machine")
    os.makedirs(out, exist_ok=True)
    report = os.path.join(out, f"{task.name}-{mode}")
    command = [ncu, "--clock-control", "none", "--profile-from-start", "off", "--target-processes", "all",
               "--export", report, "--force-overwrite"]
    for section in SECTIONS:
        command += ["--section", section]
    command += [sys.executable, os.path.abspath(__file__), task.name, mode]
    with open(os.path.join(out, f"{task.name}-{mode}.ncu.txt"), "w") as log:
        status = subprocess.call(command, stdout=log, stderr=subprocess.STDOUT)
    with open(os.path.join(out, f"{task.name}-{mode}.details.txt"), "w") as details:
        subprocess.call([ncu, "--import", report + ".ncu-rep", "--page", "details"], stdout=details,
                        stderr=subprocess.STDOUT)
    return status


def summarize_ptx(out):
    """A line for each PTX file under OUT/triton: its path, Triton's launch metadata beside it (the .json of the
    same name) and how many of each global load and store, bulk copy, shuffle and cache policy it issues."""
    lines = []
    for directory, _, names in sorted(os.walk(os.path.join(out, "triton"))):
        for name in sorted(n for n in names if n.endswith(".ptx")):
            path = os.path.join(directory, name)
            text = open(path).read()
            meta = {}
            json_path = path[:-4] + ".json"
            if os.path.exists(json_path):
                meta = json.load(open(json_path))
            counts = {}
            for line in text.splitlines():
                words = line.strip().split()
                if words and words[0].startswith("@"):  # a predicated instruction: @%p1 ld.global...
                    words = words[1:]
                word = words[0] if words else ""
                if word.startswith(("ld.global", "st.global", "cp.async", "shfl.sync", "createpolicy")):
                    counts[word] = counts.get(word, 0) + 1
            lines.append(f"{os.path.relpath(path, out)}: num_warps {meta.get('num_warps', '?')}, "
                         f"num_stages {meta.get('num_stages', '?')}, shared {meta.get('shared', '?')}; "
                         + ", ".join(f"{k} x{v}" for k, v in sorted(counts.items())))
    return lines


def keep_generated_code(task, out):
    """Runs the task under torch.compile with Inductor's and Triton's caches in OUT (set before torch is
    imported, so nothing is reused from an earlier cache), then summarises each PTX file it left there."""
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(out, "inductor")
    os.environ["TRITON_CACHE_DIR"] = os.path.join(out, "triton")
    os.environ["TORCHINDUCTOR_FX_GRAPH_CACHE"] = "0"
    run_once_profiled(task, "compile")
    lines = summarize_ptx(out)
    if not lines:
        sys.exit(f"profile_torch.py: torch.compile left no PTX under {out}/triton")
    with open(os.path.join(out, "kernels.txt"), "w") as summary:
        summary.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", help="a task of bench/tasks/tasks.py, e.g. layernorm")
    parser.add_argument("mode", choices=["eager", "compile"])
    parser.add_argument("--ncu", metavar="OUT", help="run the profile under ncu, writing into OUT")
    parser.add_argument("--code", metavar="OUT", help="keep torch.compile's generated source and PTX in OUT")
    args = parser.parse_args()
    task = load_task(args.task)
    if args.code:
        if args.mode != "compile" or args.ncu:
            sys.exit("profile_torch.py: --code keeps what torch.compile generates: mode compile, without --ncu")
        sys.exit(keep_generated_code(task, args.code))
    if args.ncu:
        sys.exit(run_ncu(task, args.mode, args.ncu))
    run_once_profiled(task, args.mode)


if __name__ == "__main__":
    main()
