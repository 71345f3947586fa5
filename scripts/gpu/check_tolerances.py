#!/usr/bin/env python3
"""GPU side: is the f16/bf16 rule (one unit roundoff of the output, runtime/runner/DType.cpp) fair to honest
kernels? PyTorch eager and torch.compile (cuBLAS, Inductor) are judged on every f16/bf16 benchmark task with
bench/harness's compare over 5 seeds against the float64 reference, and their relative L2 errors are reported
beside the tolerance. An honest library kernel failing the rule would mean the rule is too tight for that task.

    python3 scripts/gpu/check_tolerances.py [--out DIR] [--tasks a,b]
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path[:0] = [os.path.join(ROOT, "bench", "tasks"), os.path.join(ROOT, "bench", "harness")]
import measure  # noqa: E402
import tasks  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=".")
    parser.add_argument("--tasks", default="")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args(argv)
    backend = measure.CudaBackend()
    chosen = [t for t in tasks.TASKS if t.dtype in ("bf16", "f16")
              and (not args.tasks or t.name in args.tasks.split(","))]
    rows, status = [], 0
    for task in chosen:
        impls = {"eager": backend.eager(task), "compile": backend.compiled(task)}
        shapes = task.input_shapes(task.shape)
        worst = {name: 0.0 for name in impls}
        verdicts = {name: "correct" for name in impls}
        for seed in range(args.seeds):
            inputs = backend.inputs(shapes, seed, task.dtype)
            reference = backend.reference(task, inputs)
            for name, fn in impls.items():
                verdict = measure.compare(fn(*inputs), reference, task.tolerance)
                worst[name] = max(worst[name], verdict.get("rel_l2_error", float("inf")))
                if verdict["status"] != "correct" and verdicts[name] == "correct":
                    verdicts[name] = f"{verdict['status']} (seed {seed}: {verdict['why']})"
        for name in impls:
            rows.append({"task": task.name, "dtype": task.dtype, "implementation": name,
                         "tolerance": task.tolerance, "worst_rel_l2": worst[name], "verdict": verdicts[name]})
            status |= verdicts[name] != "correct"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tolerances.json"), "w") as f:
        json.dump(rows, f, indent=2)
    print("| task | dtype | implementation | tolerance | worst relative L2 (5 seeds) | verdict |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['task']} | {r['dtype']} | {r['implementation']} | {r['tolerance']:.3g} | "
              f"{r['worst_rel_l2']:.3g} | {r['verdict']} |")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
