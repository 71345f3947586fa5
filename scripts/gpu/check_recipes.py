#!/usr/bin/env python3
"""GPU smoke check of the recipe library (run on the GPU machine, with torch).

For every example x recipe artifact that build_runner_artifacts.sh compiled (gpu-artifacts/runner/table):
load it with the kforge Python package and call it on torch CUDA tensors (random inputs, output poisoned with NaN before the call), compare with a float64 torch
reference, and take a first timing next to PyTorch's float32 kernel (TF32 off). Each kernel runs in its own
child process, so a crash or an illegal address is a failed line, not a dead check.

Correctness rule: no NaN/Inf, relative L2 error (norm of the difference over the norm of the reference)
<= 1e-5, and max abs error <= 1e-4 * max|ref| * sqrt(reduction length); every element is written (NaN
poisoning). Timing: host wall clock around one synchronous call (the kforge runtime synchronises its
stream), L2 flushed by writing 512 MB before each repetition, median of --reps; the same method for
PyTorch. This includes launch overhead (~10-30 us), which matters for the sub-millisecond kernels.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import kforge  # noqa: E402

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def layernorm(x, gamma, beta):
    mean = x.mean(dim=1, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dim=1, keepdim=True)
    return centered * torch.rsqrt(var + 1e-5) * gamma + beta


def conv_nhwc(inp, flt):
    out = F.conv2d(inp.permute(0, 3, 1, 2), flt.permute(3, 2, 0, 1))
    return out.permute(0, 2, 3, 1).contiguous()


# name -> (entry function, input shapes, output shape, reference, reduction length, flops or None, bytes)
GEMM = 2 * 4096**3
CASES = {
    "gemm.matmul_register_tiled": ("gemm", [(4096, 4096), (4096, 4096)], (4096, 4096), lambda a, b: a @ b, 4096, GEMM),
    "gemm.matmul_shared_memory": ("gemm", [(4096, 4096), (4096, 4096)], (4096, 4096), lambda a, b: a @ b, 4096, GEMM),
    "gemm.gemm_fused_epilogue": ("gemm", [(4096, 4096), (4096, 4096)], (4096, 4096), lambda a, b: a @ b, 4096, GEMM),
    "batch_matmul.matmul_register_tiled": ("batch_matmul", [(16, 1024, 1024), (16, 1024, 1024)], (16, 1024, 1024),
                                           torch.bmm, 1024, 2 * 16 * 1024**3),
    "gemm_bias_relu.gemm_fused_epilogue": ("gemm_bias_relu", [(4096, 4096), (4096, 4096), (4096,)], (4096, 4096),
                                           lambda a, b, c: torch.relu(a @ b + c), 4096, GEMM),
    "gemm_scale_gelu.gemm_fused_epilogue": ("gemm_scale_gelu", [(4096, 4096), (4096, 4096)], (4096, 4096),
                                            lambda a, b: gelu_tanh(0.5 * (a @ b)), 4096, GEMM),
    "elementwise_chain.elementwise": ("elementwise_chain", [(16, 1048576), (1048576,)], (16, 1048576),
                                      lambda x, b: gelu_tanh(x + b) * x, 1, None),
    "softmax.row_reduction": ("softmax", [(4096, 4096)], (4096, 4096), lambda x: torch.softmax(x, dim=1), 4096, None),
    "layernorm.row_reduction": ("layernorm", [(8192, 4096), (4096,), (4096,)], (8192, 4096), layernorm, 4096, None),
    "row_sum.row_reduction": ("row_sum", [(8192, 4096)], (8192,), lambda x: x.sum(dim=1), 4096, None),
    "conv2d_nhwc.conv2d_nhwc": ("conv2d_nhwc", [(8, 58, 58, 64), (3, 3, 64, 128)], (8, 56, 56, 128), conv_nhwc,
                                3 * 3 * 64, 2 * 8 * 56 * 56 * 128 * 3 * 3 * 64),
}


def wall_median(fn, reps, flush):
    times = []
    for _ in range(reps):
        flush.zero_()
        torch.cuda.synchronize()
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), max(times)


def run_one(name, artifacts, reps, seeds=5, timing=True):
    _, in_shapes, out_shape, reference, red_len, flops = CASES[name]
    torch.cuda.init()
    kernel = kforge.load(os.path.join(artifacts, "table", name), runtime=os.path.join(artifacts, "libkforge_mgpu.so"))
    result = {"name": name, "seeds": []}
    for seed in range(seeds):
        gen = torch.Generator(device="cuda").manual_seed(seed)
        inputs = [torch.randn(s, device="cuda", generator=gen, dtype=torch.float32) for s in in_shapes]
        out = torch.full(out_shape, float("nan"), device="cuda", dtype=torch.float32)
        torch.cuda.synchronize()
        kernel(*inputs, out)  # candidate first, on its own fresh output
        torch.cuda.synchronize()
        ref = reference(*[t.double() for t in inputs])
        diff = (out.double() - ref)
        nonfinite = int((~torch.isfinite(out)).sum())
        ref_max = float(ref.abs().max())
        rel_l2 = float(diff.norm() / ref.norm())
        max_abs = float(diff.abs().nan_to_num(float("inf")).max())
        denom = torch.clamp(ref.abs(), min=1e-3 * ref_max)
        max_rel = float((diff.abs() / denom).nan_to_num(float("inf")).max())
        cosine = float(F.cosine_similarity(out.double().flatten().nan_to_num(0), ref.flatten(), dim=0))
        ok = nonfinite == 0 and rel_l2 <= 1e-5 and max_abs <= 1e-4 * ref_max * math.sqrt(red_len)
        result["seeds"].append(dict(seed=seed, ok=ok, nonfinite=nonfinite, rel_l2=rel_l2, max_abs=max_abs,
                                    max_rel=max_rel, cosine=cosine, ref_max=ref_max))
    result["correct"] = all(s["ok"] for s in result["seeds"])
    if not timing:
        return result

    gen = torch.Generator(device="cuda").manual_seed(100)
    inputs = [torch.randn(s, device="cuda", generator=gen) for s in in_shapes]
    out = torch.empty(out_shape, device="cuda")
    flush = torch.empty(512 * 1024 * 1024 // 4, device="cuda")
    call = kernel.bind(*inputs, out)
    call()  # warm-up: module load happened at dlopen; first launch
    torch_fn = lambda: reference(*inputs)
    torch_fn()
    kf = wall_median(call, reps, flush)
    pt = wall_median(torch_fn, reps, flush)
    kf2 = wall_median(call, reps, flush)  # drift check: kforge timed again after PyTorch
    result.update(kforge_ms=kf[0] * 1e3, kforge_min_ms=kf[1] * 1e3, kforge_max_ms=kf[2] * 1e3,
                  kforge_again_ms=kf2[0] * 1e3, torch_ms=pt[0] * 1e3, torch_min_ms=pt[1] * 1e3)
    if flops:
        result["kforge_tflops"] = flops / kf[0] / 1e12
        result["torch_tflops"] = flops / pt[0] / 1e12
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifacts", default="gpu-artifacts/runner")
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--json", help="write all results to this file")
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--seeds", type=int, default=5, help="correctness seeds (with --one)")
    parser.add_argument("--no-timing", action="store_true", help="skip timing (with --one, e.g. under a sanitizer)")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.artifacts, args.reps, args.seeds, not args.no_timing)))
        return 0
    results = []
    for name in CASES:
        try:
            proc = subprocess.run([sys.executable, __file__, "--one", name, "--artifacts", args.artifacts,
                                   "--reps", str(args.reps)], capture_output=True, text=True, timeout=args.timeout)
            if proc.returncode != 0:
                results.append({"name": name, "correct": False, "error": proc.stderr.strip()[-2000:]})
            else:
                results.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        except subprocess.TimeoutExpired:
            results.append({"name": name, "correct": False, "error": f"timed out after {args.timeout} s"})
    print(f"{torch.cuda.get_device_name()} | torch {torch.__version__}")
    print("| kernel | correct | worst rel L2 | worst max abs | kforge ms (again) | torch ms | kforge TFLOP/s | torch TFLOP/s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        if "error" in r:
            print(f"| {r['name']} | ERROR | {r['error'].splitlines()[-1] if r['error'] else ''} |||||")
            continue
        worst_l2 = max(s["rel_l2"] for s in r["seeds"])
        worst_abs = max(s["max_abs"] for s in r["seeds"])
        tf = f"{r['kforge_tflops']:.1f} | {r['torch_tflops']:.1f}" if "kforge_tflops" in r else "- | -"
        print(f"| {r['name']} | {'yes' if r['correct'] else 'NO'} | {worst_l2:.2e} | {worst_abs:.2e} | "
              f"{r['kforge_ms']:.3f} ({r['kforge_again_ms']:.3f}) | {r['torch_ms']:.3f} | {tf} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    failed = sum(not r.get("correct") for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
