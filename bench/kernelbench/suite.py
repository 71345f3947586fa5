"""KernelBench-format module files through kforge: loading a file (and its small variant), importing it, and
judging kforge's kernel against the module itself with the benchmark harness (bench/harness/measure.py).

A module file is in KernelBench's format: ``class Model(nn.Module)``, ``get_inputs()``, ``get_init_inputs()``.
Its sizes are module-level constants that ``get_inputs`` / ``get_init_inputs`` read when called, and a dict
``SMALL`` names the constants' values for the small variant (CPU checks in CI): loading a file with
``small=True`` sets those constants before anything is built. See bench/kernelbench/README.md.

Used by bench/kernelbench/run and by its tests (bench/kernelbench/tests)."""

import copy
import importlib.util
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for _path in (os.path.join(ROOT, "python"), os.path.join(ROOT, "bench", "harness")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import kforge  # noqa: E402
import measure  # noqa: E402

MODULES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "modules")

# KernelBench's rule (its eval: torch.allclose with atol = rtol = 1e-2 against the module's output), applied here
# against the float64 reference, beside kforge's (measure.compare: relative L2 error at most 1e-4 for fp32, max abs
# error bounded, no NaN/Inf, a reference that is not constant).
KERNELBENCH_ATOL = KERNELBENCH_RTOL = 1e-2
WEIGHT_SEED = 0  # the module's parameters: torch.manual_seed(WEIGHT_SEED) before Model(*get_init_inputs())


class SuiteError(Exception):
    """A module file that cannot be used, or a stage that failed: ``stage`` says where (load, import, compile,
    tune, verify) and the message why."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage


def module_files(paths):
    """The module files named by ``paths`` (files, or directories whose *.py files are taken in name order).
    A path that does not exist is an error (SuiteError at stage "load")."""
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".py") and
                            not f.startswith("_"))
        elif os.path.isfile(path):
            files.append(path)
        else:
            raise SuiteError("load", f"no such file or directory: {path}")
    if not files:
        raise SuiteError("load", f"no module files (*.py) in {', '.join(paths)}")
    return files


def module_name(path):
    """A module's name: its file name without .py, as an MLIR symbol (kforge-import's rule)."""
    name = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    return name if re.match(r"[A-Za-z_]", name) else "module_" + name


class ModuleFile:
    """A KernelBench-format file, loaded: ``build(device)`` makes the Model with its parameters (seeded), and
    ``inputs(seed, device)`` a fresh input set. ``level``: 1 or 2 from the file name's l1_/l2_ prefix, or the
    file's LEVEL, else None."""

    def __init__(self, path, small=False):
        self.path, self.small, self.name = path, small, module_name(path)
        if not os.path.isfile(path):
            raise SuiteError("load", f"no such file: {path}")
        spec = importlib.util.spec_from_file_location("_kforge_kernelbench_" + self.name, path)
        if spec is None:
            raise SuiteError("load", f"{path} is not a Python file")
        source = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(source)
        except Exception as error:
            raise SuiteError("load", f"{path} failed to load: {type(error).__name__}: {error}") from None
        model_class = getattr(source, "Model", None)
        if not isinstance(model_class, type):
            raise SuiteError("load", f"{path} has no class Model (KernelBench's format)")
        if not callable(getattr(source, "get_inputs", None)):
            raise SuiteError("load", f"{path} has no get_inputs() (KernelBench's format: the inputs to forward)")
        if small:
            sizes = getattr(source, "SMALL", None)
            if not isinstance(sizes, dict):
                raise SuiteError("load", f"{path} has no SMALL dict (the small variant's sizes; see "
                                         "bench/kernelbench/README.md)")
            unknown = [k for k in sizes if not hasattr(source, k)]
            if unknown:
                raise SuiteError("load", f"{path}: SMALL names {', '.join(unknown)}, which the file does not define")
            vars(source).update(sizes)
        self.source, self.model_class = source, model_class
        self.get_init_inputs = getattr(source, "get_init_inputs", lambda: [])
        prefix = re.match(r"l([12])_", os.path.basename(path))
        self.level = getattr(source, "LEVEL", int(prefix.group(1)) if prefix else None)
        self.doc = (source.__doc__ or "").strip().split("\n")[0]

    def build(self, device="cpu"):
        """The Model, its parameters made on ``device`` from WEIGHT_SEED."""
        import torch
        try:
            torch.manual_seed(WEIGHT_SEED)
            with torch.device(device):
                model = self.model_class(*self.get_init_inputs())
        except Exception as error:
            raise SuiteError("load", f"{self.path}: building Model failed: {type(error).__name__}: {error}") from None
        if not isinstance(model, torch.nn.Module):
            raise SuiteError("load", f"{self.path}: Model is not a torch.nn.Module")
        return model

    def inputs(self, seed, device="cpu"):
        """get_inputs() under torch.manual_seed(seed), its tensors made on ``device`` (no host copy of large
        inputs)."""
        import torch
        try:
            torch.manual_seed(seed)
            with torch.device(device):
                values = list(self.source.get_inputs())
        except Exception as error:
            raise SuiteError("load", f"{self.path}: get_inputs() failed: {type(error).__name__}: {error}") from None
        return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def import_payload(module_file, model, inputs, path):
    """kforge.import_module of the module (torch-mlir), saved at ``path`` (+ .json); returns the Payload.
    Raises SuiteError("import", torch-mlir's or torch.export's reason)."""
    import contextlib
    import io
    try:
        # torch.export prints partial graphs when a trace fails; they would bury the reason.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            payload = kforge.import_module(model, *inputs, func_name=module_file.name)
    except kforge.ImporterError as error:
        raise SuiteError("import", str(error)) from None
    except ImportError as error:  # torch-mlir missing
        raise SuiteError("import", str(error)) from None
    payload.sidecar.update(source=os.path.relpath(module_file.path, ROOT), small=module_file.small)
    payload.save(path)
    return payload


def first_error_line(text):
    """The first line of a tool's stderr that says what went wrong (an "error:" line), else its first line."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[0] if lines else ""


def compile_payload(payload_path, artifact_dir, tools_dir, target="cpu"):
    """kforge-compile of the untransformed payload; raises SuiteError("compile", its first error line)."""
    result = subprocess.run([os.path.join(tools_dir, "kforge-compile"), payload_path, "--target", target, "-o",
                             artifact_dir], capture_output=True, text=True)
    if result.returncode != 0:
        raise SuiteError("compile", first_error_line(result.stderr) or f"kforge-compile exited {result.returncode}")
    return artifact_dir


def tune_error(error):
    """kforge-tune's refusal (a kforge.TuneError) in one line: the diagnostic that led to it, then its verdict."""
    first, last = first_error_line(getattr(error, "stderr", "")), str(error)
    return last if not first or first == last else f"{first} ({last})"


def failure_summary(records, stopped=None):
    """Why a tuning run has no correct kernel: its candidates' statuses counted, and the first reason of the most
    common one (the baseline's own failure first, when it failed). ``stopped``: why kforge-tune stopped, when its
    summary says (a budget spent inside one candidate's compile leaves no candidate recorded)."""
    baseline = next((r for r in records if r.get("kind") == "baseline"), None)
    if baseline and baseline.get("status") != "correct":
        return f"the untransformed payload: {baseline.get('status')} ({baseline.get('stage', '')}): " \
               f"{first_error_line(baseline.get('reason', ''))}"
    candidates = [r for r in records if r.get("kind") == "candidate"]
    if not candidates:
        return "no candidate was recorded" + (f" (kforge-tune stopped: {stopped})" if stopped else "")
    counts = {}
    for r in candidates:
        counts.setdefault(r.get("status", "?"), []).append(r)
    commonest = max(counts, key=lambda s: len(counts[s]))
    reason = next((first_error_line(r.get("reason", "")) for r in counts[commonest] if r.get("reason")), "")
    tally = ", ".join(f"{len(v)} {k}" for k, v in sorted(counts.items(), key=lambda kv: -len(kv[1])))
    return f"no correct candidate of {len(candidates)} ({tally})" + (f"; e.g. {reason}" if reason else "")


# Several kernels ---------------------------------------------------------------------------------------------

def plan_dir(payload_path):
    """Where a payload's partition (kforge-opt --kforge-partition) is kept: beside it, so that a payload imported
    and partitioned where kforge-opt is (--import-only) carries its plan to the GPU machine, which has none."""
    return os.path.splitext(payload_path)[0] + ".plan"


def partition_plan(payload_path, tools_dir):
    """The payload's partition into kernels, or None where it is the payload itself (one kernel on the payload's
    own shapes) or cannot be partitioned (kforge-tune then takes it whole). A single kernel on reshaped tensors
    counts: its batch rows collapsed into rows of one dimension (an InstanceNorm's 64 x 64 planes as 4096 rows),
    which the row kernels take. Made where kforge-opt is, reused elsewhere from the same payload
    (kforge.partition)."""
    try:
        plan = kforge.partition(payload_path, plan_dir(payload_path), tools_dir=tools_dir)
    except kforge.ModelError:
        return None
    kinds = [step["kind"] for step in plan.steps]
    return plan if kinds.count("dispatch") > 1 or "reshape" in kinds else None


def tune_partitioned(payload_path, workdir, tools_dir, target="cpu", tune_seconds=0, trials=None, runtime=None,
                     extra_args=()):
    """The payload as its partition's kernels, each tuned on its own (kforge.compile_payload: the partition, a
    kforge-tune run per kernel kept in ``workdir``/runs), for a payload that no single kernel computes (a
    whole-tensor reduction broadcast back over its input: a fused schedule would recompute it in every tile) or
    whose rows only the partition's reshapes make rows of one dimension. Returns the kforge.Model, or None where
    the partition is the payload itself. Raises SuiteError("tune") when a kernel got no verified schedule (its
    naive kernel is no tuned result)."""
    plan = partition_plan(payload_path, tools_dir)
    if plan is None:
        return None
    try:
        # The plan partition_plan found (made here by --import-only, or carried to the GPU machine, which has
        # no kforge-opt to make another).
        model = kforge.compile_payload(payload_path, workdir, target=target, tune_seconds=tune_seconds, trials=trials,
                                       tools_dir=tools_dir, runtime=runtime, extra_args=list(extra_args),
                                       plan_directory=plan_dir(payload_path))
    except (kforge.ModelError, kforge.TuneError) as error:
        raise SuiteError("tune", f"as {len(plan.dispatches)} kernels: {error}") from None
    naive = sorted(name for name, source in model.sources.items() if source == "naive")
    if naive:
        reasons = [f"{name} ({model.naive_reasons[name]})" if name in model.naive_reasons else name for name in naive]
        raise SuiteError("tune", f"as {len(model.kernels)} kernels, {len(naive)} got no verified schedule: "
                                 + "; ".join(reasons))
    return model


def describe_partitioned(model):
    """A tuning summary of a partitioned module: its kernels and where each came from (tuned now, taken from
    the runs of an earlier call, or the heuristic's first correct one)."""
    counts = {}
    for source in model.sources.values():
        counts[source] = counts.get(source, 0) + 1
    return f"{len(model.kernels)} kernels (" + ", ".join(f"{n} {source}" for source, n in sorted(counts.items())) + ")"


# Judging ----------------------------------------------------------------------------------------------------

def _float64(value):
    import torch
    return value.double() if isinstance(value, torch.Tensor) and value.is_floating_point() else value


def kernelbench_rule(output, reference):
    """KernelBench's check: allclose(atol = rtol = 1e-2), shapes equal; a dict (passed, max_abs_error)."""
    import torch
    out = output if isinstance(output, torch.Tensor) else torch.as_tensor(output)
    out = out.to(reference.device).double()
    ref = reference.double()
    if out.shape != ref.shape:
        return {"passed": False, "why": f"shape {tuple(out.shape)}, expected {tuple(ref.shape)}"}
    passed = bool(torch.allclose(out, ref, atol=KERNELBENCH_ATOL, rtol=KERNELBENCH_RTOL))
    return {"passed": passed, "max_abs_error": float((out - ref).abs().max()) if ref.numel() else 0.0}


class ModuleTask:
    """One module as a harness task (measure.measure_task): its inputs, float64 reference and judge come from the
    module. ``compare`` applies KernelBench's rule and kforge's (measure.compare); a one-element output (a loss)
    has no spread for kforge's constant-reference rule, so it is judged by its relative error, and the references
    of the input sets must differ from each other instead (``scalar_references``, checked by ``finish``)."""

    dtype = "f32"

    def __init__(self, module_file, model, device):
        self.module_file, self.model, self.device = module_file, model, device
        self.name, self.level = module_file.name, module_file.level
        # A module whose output is a row softmax says so (SOFTMAX_ROWS = True): the harness then also checks that
        # rows sum to 1 and that inputs x 1000 (exp overflows without the row max subtracted) still pass.
        self.softmax_rows = bool(getattr(module_file.source, "SOFTMAX_ROWS", False))
        self.tolerance = measure.FP32_TOLERANCE
        self._reference_model = None
        self.scalar_references = []
        self.input_sets = {}

    def input_shapes(self, shape=None):
        """Shapes of everything the kernel reads once: forward's inputs and the module's parameters and buffers
        (the harness's bytes and floor)."""
        shapes = [tuple(x.shape) for x in self.input_set(0)]
        return shapes + [tuple(t.shape) for t in list(self.model.parameters()) + list(self.model.buffers())]

    def input_set(self, seed):
        if seed not in self.input_sets:
            self.input_sets = {seed: self.module_file.inputs(seed, self.device)}  # one set held at a time
        return self.input_sets[seed]

    def reference(self, inputs):
        """The module itself in float64 (a copy), on the inputs converted exactly to float64."""
        import torch
        if self._reference_model is None:
            self._reference_model = copy.deepcopy(self.model).double()
        with torch.no_grad():
            return self._reference_model(*[_float64(x) for x in inputs])

    def compare(self, output, reference, tolerance):
        import torch
        if isinstance(output, torch.Tensor):
            output = output.to(reference.device)
        reference = reference.double()  # integer results (argmax) are compared as numbers
        if reference.numel() == 1:
            self.scalar_references.append(float(reference))
            verdict = _compare_scalar(output, reference, tolerance)
        else:
            verdict = measure.compare(output, reference, tolerance)
        if verdict["status"] in ("correct", "inconclusive"):
            kernelbench = kernelbench_rule(output, reference)
            verdict["kernelbench_allclose"] = kernelbench["passed"]
            if not kernelbench["passed"] and verdict["status"] == "correct":
                verdict.update(status="incorrect", why=f"KernelBench's allclose (atol = rtol = {KERNELBENCH_ATOL:g}) "
                                                       f"fails: max abs error {kernelbench.get('max_abs_error', 0):.3g}")
        return verdict

    def finish(self, results):
        """After the input sets: a one-element output whose reference was the same for every set proves
        nothing (any constant passes)."""
        if len(self.scalar_references) > 1 and len(set(self.scalar_references)) == 1:
            for result in results.values():
                if result["status"] == "correct":
                    result.update(status="inconclusive", why="the one-element reference is the same for every "
                                                             "input set: a comparison proves nothing")

    def release(self):
        self._reference_model, self.input_sets = None, {}


def _compare_scalar(output, reference, tolerance):
    """kforge's rule for a one-element output: finite, relative error at most the tolerance."""
    import torch
    out = torch.as_tensor(output).detach().double().reshape(-1)
    ref = reference.detach().double().reshape(-1)
    if out.shape != ref.shape:
        return {"status": "incorrect", "why": f"shape {tuple(output.shape)}, expected {tuple(reference.shape)}"}
    value, expected = float(out[0]), float(ref[0])
    result = {"non_finite": int(not math.isfinite(value)), "reference_max_abs": abs(expected)}
    if not math.isfinite(value):
        return dict(result, status="incorrect", why="non-finite output (NaN: unwritten)")
    error = abs(value - expected) / abs(expected) if expected else abs(value)
    result.update(rel_l2_error=error, max_abs_error=abs(value - expected))
    if error > tolerance:
        return dict(result, status="incorrect", why=f"relative error {error:.3g} above {tolerance:g}")
    return dict(result, status="correct", why="")


class ModuleBackend:
    """A harness backend (measure.CpuBackend or CudaBackend) seen through one module: input sets from the module's
    get_inputs (seeded, made on the device), the float64 reference from the module, eager and torch.compile of
    the module, and kforge's artifact called with the module's own parameters. The clock, the ceilings and the
    poisoned outputs are the harness's."""

    def __init__(self, base, task, payload):
        self.base, self.task, self.payload = base, task, payload
        self.name = base.name

    def __getattr__(self, name):
        return getattr(self.base, name)

    def inputs(self, shapes, seed, dtype="f32"):
        return self.task.input_set(seed)

    def reference(self, task, inputs):
        return task.reference(inputs)

    def _no_grad(self, fn):
        import torch

        def call(*inputs):
            with torch.no_grad():
                return fn(*inputs)
        return call

    def eager(self, task):
        return self._no_grad(task.model)

    def compiled(self, task):
        """torch.compile of the module, compiled afresh (Dynamo's caches reset, as the harness does per task);
        None on the CPU backend (CI: no compiler toolchain assumed)."""
        if self.base.name != "cuda":
            return None
        import torch
        torch._dynamo.reset()
        torch._dynamo.config.recompile_limit = 64
        return self._no_grad(torch.compile(task.model))

    def kforge(self, artifact):
        """kforge's kernel as an implementation taking forward's inputs: the module's parameters are appended
        (Payload.arguments), outputs poisoned before every verified call (NaN, or the lowest integer). A
        kforge.Model (several kernels) allocates its own outputs, each kernel's verified by its tuning run."""
        import torch
        if isinstance(artifact, kforge.Model):
            return ModuleKernel(_ModelKernel(artifact), self.payload, self.task.model)
        device = self.task.device
        types = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16, "f64": torch.float64,
                 "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}

        def poisoned(shape, dtype="f32"):
            kind = types[dtype]
            fill = float("nan") if kind.is_floating_point else (True if kind == torch.bool else
                                                                  torch.iinfo(kind).min)
            return torch.full(shape, fill, dtype=kind, device=device)

        return ModuleKernel(measure._KforgeKernel(artifact, poisoned), self.payload, self.task.model)


class _ModelKernel:
    """A kforge.Model as an implementation: its kernels in order; timed calls are whole calls (the model's
    intermediates and outputs allocated by the framework, as eager PyTorch allocates from its cache)."""

    def __init__(self, model):
        self.model = model

    def __call__(self, *inputs):
        return self.model(*inputs)

    def prepare_timing(self, inputs):
        return lambda *_: self.model(*inputs)


class ModuleKernel:
    """kforge's kernel called like the module: forward's inputs, then the module's parameters and buffers."""

    def __init__(self, kernel, payload, model):
        self.kernel, self.payload, self.model = kernel, payload, model

    def __call__(self, *inputs):
        return self.kernel(*self.payload.arguments(self.model, *inputs))

    def prepare_timing(self, inputs):
        return self.kernel.prepare_timing(self.payload.arguments(self.model, *inputs))


def judge(base, module_file, model, payload, artifact_dir, device="cpu", seeds=5, warmup=3, reps=20, timing=True,
          runtime=None, implementations=("kforge", "eager", "compile")):
    """Verifies (``seeds`` fresh input sets, float64) and times kforge's kernel (the artifact in ``artifact_dir``, a
    kforge.Model of several kernels, or None: no kernel) beside the module in eager mode and under torch.compile,
    with the harness
    (measure.measure_task). Returns measure_task's result, plus ``flops`` (torch's count)."""
    task = ModuleTask(module_file, model, device)
    backend = ModuleBackend(base, task, payload)
    kernel = None
    if isinstance(artifact_dir, kforge.Model):
        kernel = backend.kforge(artifact_dir)
    elif artifact_dir is not None:
        kernel = backend.kforge(kforge.load(artifact_dir, runtime=runtime))
    chosen = {"kforge": kernel, "eager": backend.eager(task), "compile": backend.compiled(task)}
    chosen = {name: fn for name, fn in chosen.items() if name in implementations}
    if not timing:
        chosen = {name: _Untimed(fn) if fn is not None else None for name, fn in chosen.items()}
    graphs_before = base.compiled_graphs() if chosen.get("compile") and hasattr(base, "compiled_graphs") else None
    try:
        measured = measure.measure_task(backend, task, None, chosen, seeds, warmup, reps)
        task.finish(measured["implementations"])
        compiled = measured["implementations"].get("compile", {})
        if compiled.get("status") == "correct" and graphs_before is not None and \
                base.compiled_graphs() == graphs_before:
            # Dynamo ran the module eagerly: that timing is not torch.compile's, so it is not compared.
            compiled.update(status="eager fallback", why="torch.compile compiled no graph (Dynamo fell back to eager)")
        measured["flops"] = flop_count(model, task.input_set(0))
    finally:
        task.release()
    return measured


class _Untimed:
    """An implementation verified but not timed (CI's checks)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *inputs):
        return self.fn(*inputs)

    def prepare_timing(self, inputs):
        return lambda *_: None


def flop_count(model, inputs):
    """FLOPs of one forward (torch.utils.flop_counter: matmuls and convolutions; element-wise work is not
    counted, so memory-bound modules are floored by their bytes)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    counter = FlopCounterMode(display=False)
    with counter, torch.no_grad():
        model(*inputs)
    return int(counter.get_total_flops())


def check_on_cpu(path, workdir, tools_dir, seeds=5, trials=2, compile_timeout=8):
    """CI's check of one module file's small variant on the CPU, stage by stage: load, import (torch-mlir),
    compile (kforge-compile --target cpu, the untransformed payload), verify (float64, ``seeds`` input sets,
    KernelBench's rule and kforge's), tune (kforge-tune --target cpu, ``trials`` trials: the tuner takes the
    payload and finds a correct kernel; where none is and the payload partitions into several kernels, each is
    tuned on its own) and verify the tuned kernel(s) the same way. Raises SuiteError at the first
    stage that fails. A candidate's compile is cut at ``compile_timeout`` seconds: small payloads compile in
    under one, and one candidate of l2_linear_softmax ran 72 s before it aborted."""
    module_file = ModuleFile(path, small=True)
    model = module_file.build("cpu")
    payload_path = os.path.join(workdir, module_file.name + ".mlir")
    payload = import_payload(module_file, model, module_file.inputs(0), payload_path)
    artifact = compile_payload(payload_path, os.path.join(workdir, "artifact"), tools_dir)
    _verify_on_cpu(module_file, model, payload, artifact, seeds, "")
    try:
        run = kforge.tune(payload_path, os.path.join(workdir, "tune"), target="cpu", trials=trials, seeds=1,
                          tools_dir=tools_dir, extra_args=["--quiet", f"--compile-timeout={compile_timeout}"])
    except kforge.TuneError as error:
        raise SuiteError("tune", tune_error(error)) from None
    if run.best is None:
        whole = failure_summary(run.records, run.summary.get("stopped"))
        kernels = tune_partitioned(payload_path, os.path.join(workdir, "kernels"), tools_dir, trials=trials,
                                   extra_args=["--quiet", f"--compile-timeout={compile_timeout}"])
        if kernels is None:
            raise SuiteError("tune", whole)
        _verify_on_cpu(module_file, model, payload, kernels, seeds, "the tuned kernels: ")
        return
    _verify_on_cpu(module_file, model, payload, os.path.join(run.directory, "best"), seeds, "the tuned kernel: ")


def _verify_on_cpu(module_file, model, payload, artifact, seeds, what):
    measured = judge(measure.CpuBackend(), module_file, model, payload, artifact, seeds=seeds, timing=False,
                     implementations=("kforge",))
    result = measured["implementations"]["kforge"]
    if result["status"] != "correct":
        raise SuiteError("verify", f"{what}{result['status']}: {result.get('why', '')}")
