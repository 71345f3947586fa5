"""Running kforge-tune from Python.

    import kforge
    run = kforge.tune("examples/cpu/gemm_bias_relu.mlir", "runs/gbr", target="cpu", trials=16)
    run.best["speedup_vs_baseline"], run.best_schedule      # the record and the transform library's path
    kernel = run.best_artifact()                             # a kforge.Artifact, callable on arrays / tensors

kforge-tune is found in ``tools_dir``, else ``$KFORGE_BUILD_DIR/bin``, else on ``PATH``.
"""

import json
import os
import shutil
import subprocess

from .artifact import load


class TuneError(Exception):
    """kforge-tune could not run, or refused its arguments: the message is its last line, ``stderr`` all it
    printed (the diagnostic that led to it, with its location)."""

    def __init__(self, message, stderr=""):
        super().__init__(message)
        self.stderr = stderr


def _find_tool(name, tools_dir=None):
    """kforge's tool ``name``: in ``tools_dir``, else ``$KFORGE_BUILD_DIR/bin``, else on PATH."""
    for directory in (tools_dir, os.path.join(os.environ["KFORGE_BUILD_DIR"], "bin")
                      if os.environ.get("KFORGE_BUILD_DIR") else None):
        if directory and os.path.exists(os.path.join(directory, name)):
            return os.path.join(directory, name)
    found = shutil.which(name)
    if not found:
        raise TuneError(f"{name} not found: pass tools_dir=, set KFORGE_BUILD_DIR, or put it on PATH")
    return found


def _find_tune(tools_dir):
    return _find_tool("kforge-tune", tools_dir)


class TuneRun:
    """A tuning run directory: its records (db.jsonl), the best record, and the exported results."""

    def __init__(self, directory, summary=None):
        self.directory = directory
        self.summary = summary or {}
        database = os.path.join(directory, "db.jsonl")
        if not os.path.exists(database):
            raise TuneError(f"{directory} is not a tuning run (no db.jsonl)")
        self.records = []
        with open(database) as f:
            for line in f:
                if line.endswith("\n"):  # a last line cut short by a killed tuner is not a record
                    self.records.append(json.loads(line))
        correct = [r for r in self.records if r.get("kind") == "candidate" and r.get("status") == "correct"]
        self.best = min(correct, key=lambda r: r["time_ms"]) if correct else None
        self.baseline = next((r for r in self.records if r.get("kind") == "baseline"), None)

    @property
    def best_schedule(self):
        """Path of the best schedule as a transform library (kforge-opt replays it)."""
        path = os.path.join(self.directory, "best.mlir")
        return path if self.best and os.path.exists(path) else None

    def best_artifact(self, runtime=None):
        """The best kernel, loaded (see kforge.load)."""
        if not self.best:
            raise TuneError(f"the run in {self.directory} has no correct kernel")
        return load(os.path.join(self.directory, "best"), runtime=runtime)


def tune(payload, output, *, target="auto", policy="heuristic+evolve", trials=64, seed=1, seeds=None, reps=None,
         time_budget=None, resume=False, allow_tf32=False, extra_args=(), tools_dir=None):
    """Runs kforge-tune on ``payload`` into the run directory ``output``; returns a TuneRun.

    ``allow_tf32``: fp32 matmuls may use the GPU's TF32 tensor cores (kforge-tune --allow-tf32, as
    ``torch.backends.cuda.matmul.allow_tf32``), verified at TF32's tolerance. Off by default.

    A run that finds no correct kernel is returned (``run.best is None``); bad arguments or a payload
    kforge cannot tune raise TuneError with kforge-tune's message."""
    command = [_find_tune(tools_dir), os.fspath(payload), "-o", os.fspath(output), "--target", target,
               "--policy", policy, "--trials", str(trials), "--seed", str(seed), "--json"]
    if seeds is not None:
        command += ["--seeds", str(seeds)]
    if reps is not None:
        command += ["--reps", str(reps)]
    if time_budget is not None:
        command += ["--time-budget", str(time_budget)]
    if resume:
        command.append("--resume")
    if allow_tf32:
        command.append("--allow-tf32")
    command += list(extra_args)
    result = subprocess.run(command, capture_output=True, text=True)
    summary = None
    if result.stdout.strip():
        try:
            summary = json.loads(result.stdout)
        except json.JSONDecodeError:
            summary = None
    if result.returncode not in (0, 1) or summary is None:
        message = result.stderr.strip().splitlines()
        raise TuneError(message[-1] if message else f"kforge-tune exited with {result.returncode}", result.stderr)
    return TuneRun(os.fspath(output), summary)
