"""Verifying and timing one task's implementations in one process (shared/MEASURE.md's protocol).

An implementation is a callable that takes the task's inputs and returns its output (kforge's artifact, PyTorch
eager, torch.compile). A *backend* supplies the arrays, the float64 reference, the poisoned output buffers and
the clock:
  - ``CudaBackend``: PyTorch tensors on the GPU, CUDA events, L2 flushed by writing a buffer larger than L2
    before every repetition (or, with ``l2="clean"``, by reading one: L2 then holds no dirty lines for the
    implementation to write back while it runs) and the GPU then kept busy a while longer (a spin kernel) so that the host's launch
    of the implementation is queued before the start event runs: the clock times the GPU's work, not Python's
    launch overhead (torch.compile's wrapper, at times slower than the flush, once inflated its medians up to
    2x, benchmark calls 13-24); tf32 off (an fp32 task is computed in fp32);
  - ``CpuBackend``: NumPy arrays on the CPU, perf_counter; what CI runs (no GPU, no PyTorch there).
Correctness: ``seeds`` random normal inputs (fresh per seed), each implementation's output compared with the
float64 reference: no NaN/Inf (kforge's outputs start as NaN, so an unwritten element fails), relative L2
error at most the tolerance and max abs error at most 10 x tolerance x max|ref| (kforge-run's rule), and a
reference that is not constant (else inconclusive).
"""

import math
import statistics
import time

FP32_TOLERANCE = 1e-4


def compare(output, reference, tolerance=FP32_TOLERANCE):
    """Verdict of one output against the float64 reference: a dict with status, why and the errors. Both NumPy
    arrays, or both PyTorch tensors (compared where they are: on the GPU, a 64M-element output takes
    milliseconds instead of seconds on the host)."""
    if type(reference).__module__.split(".")[0] == "torch":
        import torch
        out, ref = output.detach().to(torch.float64), reference
        shape, expected = tuple(out.shape), tuple(ref.shape)
        non_finite = int((~torch.isfinite(out)).sum()) if shape == expected else 0
        ref_max = float(ref.abs().max()) if ref.numel() else 0.0
        constant = ref.numel() == 0 or float(ref.max() - ref.min()) == 0
        norm = lambda x: float(torch.linalg.vector_norm(x))  # noqa: E731
        max_abs = lambda x: float(x.abs().max())  # noqa: E731
    else:
        import numpy as np
        out = np.asarray(output, dtype=np.float64)
        ref = np.asarray(reference, dtype=np.float64)
        shape, expected = out.shape, ref.shape
        non_finite = int(np.count_nonzero(~np.isfinite(out))) if shape == expected else 0
        ref_max = float(np.max(np.abs(ref))) if ref.size else 0.0
        constant = ref.size == 0 or float(np.ptp(ref)) == 0
        norm, max_abs = np.linalg.norm, lambda x: float(np.max(np.abs(x)))
    if shape != expected:
        return {"status": "incorrect", "why": f"shape {shape}, expected {expected}"}
    result = {"non_finite": non_finite, "reference_max_abs": ref_max}
    if non_finite:
        return dict(result, status="incorrect", why=f"{non_finite} non-finite output elements (NaN: unwritten)")
    # The runner's rule (runtime/runner/Metrics.cpp): relative to the reference's own scale, so a tiny but
    # honest output is judged like any other; only a constant reference proves nothing.
    if constant:
        return dict(result, status="inconclusive", why="the reference is constant: a comparison proves nothing")
    diff = out - ref
    rel_l2 = float(norm(diff) / norm(ref))
    worst = max_abs(diff)
    result.update(rel_l2_error=rel_l2, max_abs_error=worst)
    if rel_l2 > tolerance:
        return dict(result, status="incorrect", why=f"relative L2 error {rel_l2:.3g} above {tolerance:g}")
    if worst > 10 * tolerance * ref_max:
        return dict(result, status="incorrect",
                    why=f"max abs error {worst:.3g} above 10 x {tolerance:g} x max|ref| ({ref_max:.3g})")
    return dict(result, status="correct", why="")


def row_sum_error(output):
    """The largest |sum of a row - 1| of a finite output (NumPy array or PyTorch tensor), else None."""
    if type(output).__module__.split(".")[0] == "torch":
        import torch
        out = output.detach().to(torch.float64)
        return float((out.sum(dim=-1) - 1).abs().max()) if bool(torch.isfinite(out).all()) else None
    import numpy as np
    out = np.asarray(output, dtype=np.float64)
    return float(np.max(np.abs(out.sum(axis=-1) - 1.0))) if np.all(np.isfinite(out)) else None


def summarize_times(ms):
    ms = sorted(ms)
    return {"median_ms": statistics.median(ms), "min_ms": ms[0], "max_ms": ms[-1],
            "p10_ms": ms[len(ms) // 10], "p90_ms": ms[(len(ms) * 9) // 10], "reps": len(ms)}


def host_bound(host_ms, lead_ms):
    """What the host's side of the timed repetitions says about their device times. ``host_ms``: for each
    repetition, how long the host took from queueing the flush to the implementation's return (its work then
    queued); ``lead_ms``: how long the GPU was busy with the flush and spin before the start event. A
    repetition whose host took longer than the lead left the GPU idle after the start event: its time includes
    that gap, not the GPU's work alone."""
    return {"host_launch_max_ms": max(host_ms), "lead_ms": lead_ms,
            "host_bound_reps": sum(h > lead_ms for h in host_ms)}


class _KforgeKernel:
    """kforge's kernel as an implementation. Verified calls get fresh outputs poisoned with NaN (an element the
    kernel does not write fails the check); timed calls reuse outputs allocated once, bound with their
    inputs (no allocation or fill inside the timed region: eager PyTorch allocates from its cache)."""

    def __init__(self, artifact, poisoned):
        self.artifact, self.poisoned = artifact, poisoned

    def __call__(self, *inputs):
        outputs = [self.poisoned(a["shape"], a["dtype"]) for a in self.artifact.outputs]
        self.artifact(*inputs, *outputs)
        return outputs[0]

    def prepare_timing(self, inputs):
        outputs = [self.poisoned(a["shape"], a["dtype"]) for a in self.artifact.outputs]
        bound = self.artifact.bind(*inputs, *outputs)
        return lambda *_: bound()


ELEMENT_BYTES = {"f32": 4, "bf16": 2, "f16": 2}


class CpuBackend:
    name = "cpu"

    def __init__(self):
        import numpy
        self.np = numpy

    def supports(self, task):
        # NumPy has no bf16; TF32 is a GPU's tensor cores' (kforge-tune refuses --allow-tf32 on the CPU).
        return task.dtype == "f32" and getattr(task, "precision", "ieee") == "ieee"

    def set_precision(self, precision):
        """The CPU computes fp32 as fp32 (tasks that allow TF32 are not measured here)."""

    def inputs(self, shapes, seed, dtype="f32"):
        rng = self.np.random.default_rng(seed)
        return [rng.standard_normal(shape, dtype=self.np.float32) for shape in shapes]

    def reference(self, task, inputs):
        """The task's NumPy definition in float64."""
        return self.np.asarray(task.numpy(*[x.astype(self.np.float64) for x in inputs]))

    def eager(self, task):
        return lambda *xs: task.numpy(*xs)

    def compiled(self, task):
        return None  # no torch.compile without PyTorch

    def kforge(self, artifact):
        np = self.np
        return _KforgeKernel(artifact, lambda shape, dtype="f32": np.full(shape, np.nan, dtype=np.float32))

    def time(self, fn, inputs, warmup, reps):
        for _ in range(warmup):
            fn(*inputs)
        ms = []
        for _ in range(reps):
            start = time.perf_counter()
            fn(*inputs)
            ms.append((time.perf_counter() - start) * 1e3)
        return summarize_times(ms)

    def ceilings(self):
        """Copy bandwidth and fp32 matmul rate of this machine, measured now (the roofline floor's inputs)."""
        np = self.np
        x = np.ones(1 << 25, dtype=np.float32)
        y = np.empty_like(x)
        copy = self.time(lambda: np.copyto(y, x), [], 2, 10)["median_ms"]
        read = self.time(lambda: np.add.reduce(x), [], 2, 10)["median_ms"]
        write = self.time(lambda: y.fill(1.0), [], 2, 10)["median_ms"]
        a = np.ones((1024, 1024), dtype=np.float32)
        mm = self.time(lambda: a @ a, [], 1, 5)["median_ms"]
        return {"copy_gbps": 2 * x.nbytes / (copy * 1e6), "read_gbps": x.nbytes / (read * 1e6),
                "write_gbps": y.nbytes / (write * 1e6), "fp32_tflops": 2 * 1024 ** 3 / (mm * 1e9),
                "bf16_tflops": None,
                "how": "NumPy copy, sum (read) and fill (write) of 128 MB; NumPy fp32 matmul 1024^3"}


class CudaBackend:
    name = "cuda"

    # How each repetition's flush leaves L2. "dirty" (shared/MEASURE.md's protocol): the flush writes a buffer
    # larger than L2, which then holds its dirty lines, written back to DRAM while the implementation runs (as
    # after a kernel that wrote its output). "clean": the flush reads the buffer, so the dirty lines of whatever
    # ran before are written back before the clock starts (as ncu's cache control leaves it).
    L2_STATES = {"dirty": "flushed by writing a buffer larger than L2 (its dirty lines left there)",
                 "clean": "flushed by reading a buffer larger than L2 (no dirty lines left there)"}

    def __init__(self, device=0, l2="dirty"):
        if l2 not in self.L2_STATES:
            raise ValueError(f"l2 must be one of {', '.join(self.L2_STATES)}, not {l2!r}")
        self.l2 = l2
        import torch
        self.torch = torch
        # The precision is part of the task: fp32 tasks are not computed in tf32, by anyone, unless the task
        # allows TF32 to everyone (set_precision, for that task's measurement only).
        self.set_precision("ieee")
        self.device = torch.device("cuda", device)
        l2 = torch.cuda.get_device_properties(self.device).L2_cache_size
        self.flush = torch.empty(max(4 * l2, 256 << 20) // 4, dtype=torch.float32, device=self.device)
        self.flush.zero_()  # what the clean flush reads: defined values
        self.spin_cycles, self.lead_ms = self._calibrate_lead()

    SPIN_MS = 0.2  # how long the GPU spins after the flush: longer than a launch takes the host, but for hiccups
    # An implementation whose launch outlasts that lead is timed again with a spin of twice its slowest launch
    # (torch.compile's gemms took the host 0.4-0.65 ms per call on the H200, benchmark call 33), at most this:
    MAX_SPIN_MS = 20.0

    def _event_ms(self, work):
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        work()
        torch.cuda.synchronize()
        start.record()
        work()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop)

    def _calibrate_lead(self):
        """Spin cycles for SPIN_MS (torch.cuda._sleep spins a GPU thread for a number of clock cycles; measured,
        since the clock varies), and the lead the GPU then has over the host at each start event: the flush plus
        the spin. Without torch.cuda._sleep, no spin: the lead is the flush alone."""
        torch = self.torch
        self.flush_ms = flush_ms = self._event_ms(self._flush)
        self.spin_ms_per_cycle = 0.0
        if not hasattr(torch.cuda, "_sleep"):
            return 0, flush_ms
        try:
            probe = 1 << 20
            per_cycle_ms = self._event_ms(lambda: torch.cuda._sleep(probe)) / probe
            cycles = int(self.SPIN_MS / per_cycle_ms) if per_cycle_ms > 0 else 0
            lead = flush_ms + (self._event_ms(lambda: torch.cuda._sleep(cycles)) if cycles else 0.0)
            self.spin_ms_per_cycle = per_cycle_ms if cycles else 0.0
            return cycles, lead
        except RuntimeError:  # a private API: without it the flush alone leads, and host-bound repetitions say so
            return 0, flush_ms

    def _flush(self):
        """Evicts the inputs from L2 (the buffer is 4x L2, at least 256 MiB), leaving it dirty or clean."""
        if self.l2 == "clean":
            self.flush.sum()  # a read: what L2 held is written back now, and it holds clean lines
        else:
            self.flush.zero_()

    def supports(self, task):
        return task.dtype in ("f32", "bf16", "f16")

    def set_precision(self, precision):
        """"ieee": fp32 matmuls and convolutions in fp32; "tf32": PyTorch may use TF32 tensor cores for them
        (allow_tf32, float32_matmul_precision "high"), as kforge-tune --allow-tf32 lets kforge. Set before a
        task's implementations are built (torch.compile reads it when it compiles) and measured."""
        torch = self.torch
        tf32 = precision == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        torch.set_float32_matmul_precision("high" if tf32 else "highest")

    def inputs(self, shapes, seed, dtype="f32"):
        torch = self.torch
        generator = torch.Generator(device=self.device).manual_seed(seed)
        values = [torch.randn(shape, generator=generator, device=self.device, dtype=torch.float32) for shape in shapes]
        half = {"bf16": torch.bfloat16, "f16": torch.float16}.get(dtype)
        return [v.to(half) for v in values] if half else values

    def _torch_fn(self, task):
        return eval(task.torch, {"torch": self.torch})  # the task's PyTorch definition, a lambda

    def reference(self, task, inputs):
        """The task's PyTorch definition in float64 on the GPU (the NumPy one would take minutes at 4096^3); it
        stays there, and outputs are compared with it there."""
        with self.torch.no_grad():
            return self._torch_fn(task)(*[x.double() for x in inputs])

    def _no_grad(self, fn):
        """Every call of an implementation in one grad mode: torch.compile guards on it, and a verification call
        with grad on followed by timed calls under no_grad would recompile."""
        torch = self.torch

        def call(*inputs):
            with torch.no_grad():
                return fn(*inputs)
        return call

    def eager(self, task):
        return self._no_grad(self._torch_fn(task))

    def compiled(self, task):
        """torch.compile of the task, compiled afresh: Dynamo's caches are reset per task. Without that, every
        task's compiled function shares Dynamo's wrapper frame, and after 8 tasks its recompile limit silently
        sends the later ones to eager PyTorch (seen on the H200: "compile" timed equal to eager from the 9th
        task on)."""
        torch = self.torch
        torch._dynamo.reset()
        torch._dynamo.config.recompile_limit = 64
        return self._no_grad(torch.compile(self._torch_fn(task)))

    def compiled_graphs(self):
        """Graphs Dynamo has compiled (its counter): unchanged across a compiled implementation's calls means it
        fell back to eager, and its timing is not torch.compile's."""
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])

    def kforge(self, artifact):
        torch = self.torch
        types = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
        return _KforgeKernel(artifact, lambda shape, dtype="f32": torch.full(shape, float("nan"), dtype=types[dtype],
                                                                               device=self.device))

    def time(self, fn, inputs, warmup, reps):
        """Device time of ``fn`` (median etc. of ``reps`` repetitions, L2 flushed before each), and what the host
        side says of it (host_bound). If some repetition's launch outlasted the GPU's lead, every repetition is
        timed again with a spin of twice the slowest launch (``lead_extended``); what is still host-bound then
        is reported as such."""
        torch = self.torch
        with torch.no_grad():
            for _ in range(warmup):
                fn(*inputs)
            torch.cuda.synchronize()
            ms, host_ms = self._repetitions(fn, inputs, reps, self.spin_cycles)
            bound = host_bound(host_ms, self.lead_ms)
            extended = False
            if bound["host_bound_reps"] and self.spin_ms_per_cycle > 0:
                spin_ms = min(self.MAX_SPIN_MS, 2 * bound["host_launch_max_ms"])
                cycles = int(spin_ms / self.spin_ms_per_cycle)
                if cycles > self.spin_cycles:
                    ms, host_ms = self._repetitions(fn, inputs, reps, cycles)
                    bound = host_bound(host_ms, self.flush_ms + cycles * self.spin_ms_per_cycle)
                    extended = True
        return dict(summarize_times(ms), **bound, lead_extended=extended)

    def _repetitions(self, fn, inputs, reps, spin_cycles):
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        ms, host_ms = [], []
        for _ in range(reps):
            began = time.perf_counter()  # the GPU is idle: its lead starts with the flush
            self._flush()  # L2 holds none of the inputs
            if spin_cycles:
                torch.cuda._sleep(spin_cycles)  # the GPU's lead: the launch below is queued in time
            start.record()
            fn(*inputs)
            host_ms.append((time.perf_counter() - began) * 1e3)
            stop.record()
            torch.cuda.synchronize()  # the device, not one stream
            ms.append(start.elapsed_time(stop))
        return ms, host_ms

    def ceilings(self):
        torch = self.torch
        x = torch.empty(1 << 28, dtype=torch.float32, device=self.device)  # 1 GiB
        y = torch.empty_like(x)
        copy = self.time(lambda: y.copy_(x), [], 3, 20)["median_ms"]
        # Read-only: the faster of two reads of the same GiB, torch's whole sum (two passes) and its sum over rows
        # of 4096 (one pass, a row reduction's form; 256 KiB written, 0.02%). The whole sum alone measured 3010
        # GB/s on an H100 where a kernel read 4.29 GB at 3.20 TB/s (session 69, l1_prod_dim: "107% of the read
        # ceiling").
        read = min(self.time(lambda: x.sum(), [], 3, 20)["median_ms"],
                   self.time(lambda: x.view(-1, 4096).sum(dim=1), [], 3, 20)["median_ms"])
        write = self.time(lambda: y.fill_(1.0), [], 3, 20)["median_ms"]
        a = torch.randn(8192, 8192, device=self.device)
        b = torch.randn(8192, 8192, device=self.device)
        mm = self.time(lambda: a @ b, [], 3, 20)["median_ms"]
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        mm16 = self.time(lambda: a16 @ b16, [], 3, 20)["median_ms"]
        ah, bh = a.to(torch.float16), b.to(torch.float16)
        mmh = self.time(lambda: ah @ bh, [], 3, 20)["median_ms"]
        self.set_precision("tf32")
        try:
            mm32 = self.time(lambda: a @ b, [], 3, 20)["median_ms"]
        finally:
            self.set_precision("ieee")
        del x, y, a, b, a16, b16, ah, bh
        return {"copy_gbps": 2 * (1 << 30) / (copy * 1e6), "read_gbps": (1 << 30) / (read * 1e6),
                "write_gbps": (1 << 30) / (write * 1e6), "fp32_tflops": 2 * 8192 ** 3 / (mm * 1e9),
                "bf16_tflops": 2 * 8192 ** 3 / (mm16 * 1e9), "f16_tflops": 2 * 8192 ** 3 / (mmh * 1e9),
                "tf32_tflops": 2 * 8192 ** 3 / (mm32 * 1e9),
                "how": "torch copy_ (read + write), the faster of sum and row sum (read) and fill_ (write) of 1 GiB; "
                       "cuBLAS fp32 (tf32 off), "
                       "bf16, f16 and fp32 with TF32 allowed, 8192^3 via torch.matmul"}


# A task whose traffic is almost all reads (a reduction, a loss) or almost all writes is bounded by the read-only
# or write-only bandwidth, not by copy's: a read-only kernel reaches about 108% of copy bandwidth on the H200
# (issue 28). Below this share of the other direction, a task counts as read-only (or write-only).
ONE_WAY_SHARE = 1 / 16


def bandwidth_ceiling(read_bytes, write_bytes, ceilings):
    """The memory bandwidth that bounds a task's traffic, as (GB/s, "read" | "write" | "copy"): the read-only
    (write-only) bandwidth where at most ONE_WAY_SHARE of its bytes are written (read), else copy bandwidth
    (reads and writes together, as a copy's). Copy where the run measured no one-way ceilings (older reports) or
    the traffic's split is unknown (read_bytes None)."""
    if read_bytes is not None and write_bytes is not None and read_bytes + write_bytes > 0:
        total = read_bytes + write_bytes
        if ceilings.get("read_gbps") and write_bytes <= total * ONE_WAY_SHARE:
            return ceilings["read_gbps"], "read"
        if ceilings.get("write_gbps") and read_bytes <= total * ONE_WAY_SHARE:
            return ceilings["write_gbps"], "write"
    return ceilings["copy_gbps"], "copy"


def floor_ms(task_bytes, flops, ceilings, dtype="f32", read_bytes=None):
    """The roofline floor: the larger of moving every argument once at the bandwidth its traffic implies
    (bandwidth_ceiling; ``read_bytes`` of the ``task_bytes`` are read, the rest written) and the FLOPs at the
    matmul rate of the task's precision (cuBLAS fp32, or bf16 on tensor cores)."""
    rate = ceilings.get(f"{dtype}_tflops") if dtype in ("bf16", "f16", "tf32") else ceilings["fp32_tflops"]
    compute = flops / (rate * 1e9) if flops and rate else 0
    write_bytes = task_bytes - read_bytes if read_bytes is not None else None
    gbps, _ = bandwidth_ceiling(read_bytes, write_bytes, ceilings)
    return max(task_bytes / (gbps * 1e6), compute)


ABOVE_CEILING = 1.05  # a measured rate this far above its ceiling is flagged: the timing or the traffic is wrong


def bandwidth_share(task_bytes, read_bytes, ms, ceilings):
    """What a kernel of ``ms`` reached of the bandwidth its traffic implies: (share, ceiling name, text). The
    text flags a rate above the ceiling (by more than ABOVE_CEILING), which no honest kernel reaches: its
    timing, or the bytes the task counts, is wrong."""
    write_bytes = task_bytes - read_bytes if read_bytes is not None else None
    gbps, name = bandwidth_ceiling(read_bytes, write_bytes, ceilings)
    share = task_bytes / (ms * 1e6) / gbps
    text = f"{100 * share:.0f}% of {name} bandwidth"
    if share > ABOVE_CEILING:
        text += f" (ABOVE its {name} ceiling of {gbps:.0f} GB/s: the timing or the bytes counted are wrong)"
    return share, name, text


LARGE_INPUT_SCALE = 1000.0  # exp(1000 * x) overflows fp32 for x > 0.09 unless the row max is subtracted


def softmax_checks(backend, task, shapes, dtype, seed, implementations, results, tolerance):
    """Properties of a row softmax beyond the reference comparison: its rows sum to 1 (within the tolerance,
    per row) and inputs scaled by LARGE_INPUT_SCALE give finite outputs that still match the reference. An
    implementation that fails either is incorrect; the checks are recorded under "checks"."""
    large = [x * LARGE_INPUT_SCALE for x in backend.inputs(shapes, seed, dtype)]
    reference = backend.reference(task, large)
    for name, fn in implementations.items():
        result = results[name]
        if fn is None or result["status"] != "correct":
            continue
        try:
            output = fn(*large)
            verdict = compare(output, reference, tolerance)
            row_error = row_sum_error(output)
        except Exception as error:
            verdict, row_error = {"status": "failed", "why": f"{type(error).__name__}: {error}"}, None
        result["checks"] = {"large_inputs": dict(verdict, scale=LARGE_INPUT_SCALE), "rows_sum_max_error": row_error}
        if verdict["status"] != "correct":
            result["status"], result["why"] = verdict["status"], f"inputs x {LARGE_INPUT_SCALE:g}: {verdict['why']}"
        elif row_error is None or row_error > tolerance:
            result["status"], result["why"] = "incorrect", f"a row sums to 1 +- {row_error}, beyond {tolerance:g}"


def measure_task(backend, task, shape, implementations, seeds=5, warmup=3, reps=20, tolerance=None):
    """Verifies every implementation over ``seeds`` seeds, then times the correct ones on the last seed's
    inputs. ``implementations``: name -> callable or None (not available). Returns {"implementations": name ->
    result, "bytes": the bytes of the inputs and the output, each moved once, "read_bytes": the inputs' share}."""
    shapes = task.input_shapes(shape)
    elements = sum(math.prod(s) for s in shapes)
    dtype = getattr(task, "dtype", "f32")
    tolerance = tolerance if tolerance is not None else getattr(task, "tolerance", FP32_TOLERANCE)
    results = {name: {"status": "n/a" if fn is None else "correct", "seeds": []}
               for name, fn in implementations.items()}
    judge = getattr(task, "compare", compare)  # a task may bring its own judge (bench/kernelbench: two rules)
    inputs = None
    for seed in range(seeds):
        inputs = backend.inputs(shapes, seed, dtype)
        reference = backend.reference(task, inputs)
        output_elements = math.prod(reference.shape)
        for name, fn in implementations.items():
            result = results[name]
            if fn is None or result["status"] not in ("correct",):
                continue
            try:
                verdict = judge(fn(*inputs), reference, tolerance)
            except Exception as error:  # a failing implementation is a result, not the end of the benchmark
                verdict = {"status": "failed", "why": f"{type(error).__name__}: {error}"}
            result["seeds"].append(dict(verdict, seed=seed))
            if verdict["status"] != "correct":
                result["status"], result["why"] = verdict["status"], f"seed {seed}: {verdict['why']}"
    if getattr(task, "softmax_rows", False):
        softmax_checks(backend, task, shapes, dtype, seeds, implementations, results, tolerance)
    for name, fn in implementations.items():
        if results[name]["status"] == "correct":
            timed = fn.prepare_timing(inputs) if hasattr(fn, "prepare_timing") else fn
            results[name]["timing"] = backend.time(timed, inputs, warmup, reps)
    return {"implementations": results, "bytes": ELEMENT_BYTES[dtype] * (elements + output_elements),
            "read_bytes": ELEMENT_BYTES[dtype] * elements, "tolerance": tolerance}


def geomean(values):
    values = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None
