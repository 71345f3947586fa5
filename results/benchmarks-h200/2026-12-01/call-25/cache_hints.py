#!/usr/bin/env python3
"""Experiment (call 25): do PTX cache qualifiers on a row kernel's global loads and stores move its time?

kforge's best kernels of call 23 (ptx/, lowered here from each task's best.mlir with
`kforge-opt ... --kforge-lower-to-nvvm="format=isa dump-dir=..."`) are rewritten textually, one variant per
qualifier set (ld.global -> ld.global.nc.L2::256B, st.global -> st.global.cs, ...), JIT-loaded through the driver
(cuModuleLoadData) and launched on PyTorch's stream with the kernel's own memref-descriptor parameters. Every
variant is verified before it is timed (output poisoned with NaN, relative L2 error against a float64 reference),
then all variants, eager and torch.compile are timed interleaved over several rounds: CUDA events, L2 flushed
(a 256 MiB write) before each repetition, median per contender.

An experiment to decide whether a cache-qualifier action is worth building, not a benchmark of record:
    python3 cache_hints.py --ptx-dir ptx --out results.json
"""
import argparse
import ctypes
import importlib.util
import json
import os
import re
import shutil
import subprocess
import tempfile
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", "..", "..", ".."))

# (name, load qualifiers, store qualifiers). PTX ISA 8.0: ld.global{.cop}{.nc}{.L1::evict*}{.L2::prefetch}.vec.type,
# st.global{.cop}{.L1::evict*}.vec.type.
VARIANTS = [
    ("base", "", ""),
    ("ld.L2::128B", ".L2::128B", ""),
    ("ld.nc", ".nc", ""),
    ("ld.L1::no_allocate", ".L1::no_allocate", ""),
    ("ld.cs", ".cs", ""),
    ("ld.lu", ".lu", ""),
    ("st.cs", "", ".cs"),
    ("ld.nc+st.cs", ".nc", ".cs"),
    ("ld.L2::128B+st.cs", ".L2::128B", ".cs"),
    ("ld.cs+st.cs", ".cs", ".cs"),
    ("ld.L2::256B+st.cs", ".L2::256B", ".cs"),
    # Added for call 27: L2 cache policies (createpolicy + .L2::cache_hint, as torch.compile's Triton kernels load).
    ("ld.L2[evict_first]+st.cs", ".L2::cache_hint[evict_first]", ".cs"),
    ("ld.L1::evict_first.L2[evict_first]+st.cs", ".L1::evict_first.L2::cache_hint[evict_first]", ".cs"),
    ("ld.L2[evict_last]+st.cs", ".L2::cache_hint[evict_last]", ".cs"),
    ("st.L2[evict_first]", "", ".L2::cache_hint[evict_first]"),
    ("ld.nc.L2[evict_first]+st.cs", ".nc.L2::cache_hint[evict_first]", ".cs"),
    # On the *_ro kernels (read_only_inputs: gamma and beta already ld.global.nc) these touch x's loads alone.
    ("ld.cg", ".cg", ""),
    ("ld.cg+st.cs", ".cg", ".cs"),
    ("ld.L1::no_allocate+st.cs", ".L1::no_allocate", ".cs"),
]

# Kernel parameters: memref descriptors in the kernel's order (names index the host function's tensors:
# inputs in order, then "out"). Grid and block from the host module's gpu.launch_func.
KERNELS = {
    "layernorm_plain": dict(params=["x0", "out"], grid=8192, block=256),
    "layernorm": dict(params=["x0", "out", "x1", "x2"], grid=8192, block=256),
    "rms_norm": dict(params=["x0", "out", "x1"], grid=8192, block=256),
    "row_sum": dict(params=["x0", "out"], grid=8192, block=512),
    "softmax": dict(params=["x0", "out"], grid=4096, block=256),
    # Added for call 27: call 23's schedules with read_only_inputs (PTX in call-27/ptx/, lowered here at the
    # read_only_inputs commit): gamma and beta by ld.global.nc, x plain (its address also goes to prefetch_rows).
    "layernorm_ro": dict(task="layernorm", ptx="layernorm_ro.sm_90.ptx", kernel="layernorm_kernel_bounded_0",
                         params=["x0", "out", "x1", "x2"], grid=8192, block=256),
    "rms_norm_ro": dict(task="rms_norm", ptx="rms_norm_ro.sm_90.ptx", kernel="rms_norm_kernel_bounded_0",
                        params=["x0", "out", "x1"], grid=8192, block=256),
}


def load_tasks():
    spec = importlib.util.spec_from_file_location("tasks", os.path.join(ROOT, "bench", "tasks", "tasks.py"))
    tasks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tasks)
    return {t.name: t for t in tasks.TASKS}


def rewrite(ptx, load_q, store_q):
    """`ptx` with `load_q` after every ld.global and `store_q` after every st.global (32-bit, scalar or vector).
    A qualifier ending in `.L2::cache_hint[POLICY]` also gets a cache-policy operand, made once at the kernel's
    start by `createpolicy.fractional.L2::POLICY.b64` (fraction 1.0)."""
    policies = []

    def with_policy(qualifier, kind):
        match = re.fullmatch(r"(.*\.L2::cache_hint)\[(\w+)\]", qualifier)
        if not match:
            return qualifier, ""
        register = f"%kf_policy_{kind}"
        policies.append((register, match.group(2)))
        return match.group(1), f", {register}"

    load_q, load_operand = with_policy(load_q, "ld")
    store_q, store_operand = with_policy(store_q, "st")
    ptx = re.sub(r"\bld\.global\.(v[24]\.)?b32([^;]*);",
                 lambda m: f"ld.global{load_q}.{m.group(1) or ''}b32{m.group(2)}{load_operand};", ptx)
    ptx = re.sub(r"\bst\.global\.(v[24]\.)?b32([^;]*);",
                 lambda m: f"st.global{store_q}.{m.group(1) or ''}b32{m.group(2)}{store_operand};", ptx)
    if not policies:
        return ptx
    lines = ptx.split("\n")
    body = lines.index("{", next(i for i, line in enumerate(lines) if ".entry" in line))
    first = next(i for i in range(body + 1, len(lines))
                 if lines[i].strip() and not lines[i].strip().startswith((".", "//")))
    made = [f"\t.reg .b64 \t{r};" for r, _ in policies]
    made += [f"\tcreatepolicy.fractional.L2::{policy}.b64 \t{r}, 1.0;" for r, policy in policies]
    return "\n".join(lines[:first] + made + lines[first:])


class Driver:
    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")

    def check(self, status, what):
        if status != 0:
            name = ctypes.c_char_p()
            self.cuda.cuGetErrorName(status, ctypes.byref(name))
            raise RuntimeError(f"{what}: {name.value.decode() if name.value else status}")

    def load(self, ptx, kernel, image=None):
        """The kernel from PTX text (the driver JITs it) or, with `image`, from a cubin assembled by ptxas."""
        module = ctypes.c_void_p()
        log = ctypes.create_string_buffer(8192)
        # CU_JIT_ERROR_LOG_BUFFER (5), CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES (6)
        options = (ctypes.c_int * 2)(5, 6)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(8192))
        data = image if image is not None else ptx.encode() + b"\0"
        status = self.cuda.cuModuleLoadDataEx(ctypes.byref(module), ctypes.c_char_p(data), 2,
                                              options, values)
        if status != 0:
            raise RuntimeError(f"cuModuleLoadDataEx: {status}: {log.value.decode(errors='replace')[:500]}")
        function = ctypes.c_void_p()
        self.check(self.cuda.cuModuleGetFunction(ctypes.byref(function), module, kernel.encode()), "get function")
        return function

    def launcher(self, function, tensors, grid, block):
        values = []
        for t in tensors:
            values += [t.data_ptr(), t.data_ptr(), 0, *t.shape, *t.stride()]
        cells = [ctypes.c_uint64(v) for v in values]
        params = (ctypes.c_void_p * len(cells))(*[ctypes.cast(ctypes.byref(c), ctypes.c_void_p) for c in cells])

        def launch():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            self.check(self.cuda.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream, params, None),
                       "launch")
        launch.keep = (cells, params)
        return launch


def assemble(ptx, work):
    """The cubin ptxas makes of `ptx` (-O3, sm_90: what kforge-compile's fatbin holds)."""
    source, cubin = os.path.join(work, "k.ptx"), os.path.join(work, "k.cubin")
    with open(source, "w") as f:
        f.write(ptx)
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    subprocess.run([ptxas, "-O3", "-arch=sm_90", source, "-o", cubin], check=True, capture_output=True)
    return open(cubin, "rb").read()


def rel_l2(out, ref):
    out64 = out.double()
    if not torch.isfinite(out64).all():
        return float("inf")
    return float((out64 - ref).norm() / ref.norm())


def time_rounds(contenders, flush, rounds, reps):
    times = {name: [] for name in contenders}
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(rounds):
        for name, fn in contenders.items():
            for _ in range(3):
                fn()
            for _ in range(reps):
                flush.zero_()  # no synchronisation here: the host's launch overlaps the flush, as in bench/run
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize()
                times[name].append(start.elapsed_time(end))
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptx-dir", default=os.path.join(HERE, "ptx"),
                        help="directories of the kernels' PTX, separated by ':', searched in order")
    parser.add_argument("--tasks", default="layernorm_plain,rms_norm,row_sum,layernorm,softmax")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--variants", default=",".join(v for v, _, _ in VARIANTS),
                        help="the PTX variants to time (JIT-compiled by the driver)")
    parser.add_argument("--cubin", default="",
                        help="variants also timed as cubins assembled by ptxas (as in kforge's artifacts)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    tasks = load_tasks()
    driver = Driver()
    torch.zeros(1, device="cuda")
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    work = tempfile.mkdtemp()
    chosen = [v for v in VARIANTS if v[0] in args.variants.split(",")]
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "tasks": {}}
    for name in args.tasks.split(","):
        spec = KERNELS[name]
        task = tasks[spec.get("task", name)]
        kernel = spec.get("kernel", f"{name}_kernel")
        generator = torch.Generator(device="cuda").manual_seed(0)
        inputs = [torch.randn(s, generator=generator, device="cuda") for s in task.input_shapes(task.shape)]
        torch_fn = eval(task.torch, {"torch": torch})
        with torch.no_grad():
            reference = torch_fn(*[t.double() for t in inputs])
            out = torch.empty_like(reference, dtype=torch.float32)
            named = {f"x{i}": t for i, t in enumerate(inputs)}
            named["out"] = out
            ptx_name = spec.get("ptx", f"{name}_kernel.sm_90.ptx")
            found = [os.path.join(d, ptx_name) for d in args.ptx_dir.split(":") if os.path.exists(os.path.join(d, ptx_name))]
            if not found:
                sys.exit(f"cache_hints.py: no {ptx_name} in {args.ptx_dir}")
            ptx = open(found[0]).read()
            contenders, record = {}, {}
            variants = [(v, l, s, False) for v, l, s in chosen]
            variants += [("cubin " + v, l, s, True) for v, l, s in VARIANTS if v in args.cubin.split(",")]
            for variant, load_q, store_q, offline in variants:
                entry = record.setdefault(variant, {"load": load_q, "store": store_q, "ptxas": offline})
                try:
                    text = rewrite(ptx, load_q, store_q)
                    image = assemble(text, work) if offline else None
                    function = driver.load(text, kernel, image)
                except (RuntimeError, subprocess.CalledProcessError) as error:
                    entry["error"] = str(error)
                    continue
                launch = driver.launcher(function, [named[p] for p in spec["params"]], spec["grid"], spec["block"])
                errors = []
                for seed in range(3):
                    generator.manual_seed(100 + seed)
                    for t in inputs:
                        t.copy_(torch.randn(t.shape, generator=generator, device="cuda"))
                    out.fill_(float("nan"))
                    launch()
                    torch.cuda.synchronize()
                    errors.append(rel_l2(out, torch_fn(*[t.double() for t in inputs])))
                entry["rel_l2"] = max(errors)
                if max(errors) > 1e-5:
                    entry["error"] = f"wrong result: relative L2 {max(errors):.3g}"
                    continue
                contenders[variant] = launch
            compiled = torch.compile(torch_fn)
            for _ in range(3):
                compiled(*inputs)
            contenders["torch eager"] = lambda: torch_fn(*inputs)
            contenders["torch.compile"] = lambda: compiled(*inputs)
            times = time_rounds(contenders, flush, args.rounds, args.reps)
        for variant, samples in times.items():
            entry = record.setdefault(variant, {})
            entry.update(median_ms=statistics.median(samples), min_ms=min(samples),
                         round_medians_ms=[statistics.median(samples[i * args.reps:(i + 1) * args.reps])
                                           for i in range(args.rounds)])
        results["tasks"][name] = record
        base = record["base"]["median_ms"]
        print(f"== {name}")
        for variant, entry in record.items():
            if "median_ms" in entry:
                rounds = " ".join(f"{m:.4f}" for m in entry["round_medians_ms"])
                print(f"  {variant:40s} {entry['median_ms']:.4f} ms  (rounds {rounds})  x{base / entry['median_ms']:.3f}")
            else:
                print(f"  {variant:40s} {entry.get('error')}")
        sys.stdout.flush()
        del inputs, out, reference, named
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
