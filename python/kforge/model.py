"""Whole models: a function of many ops as several kernels, each tuned once and kept in a tuning database.

    model = kforge.compile_payload("runs/mlp.mlir", "runs/mlp-art", target="cpu", db="~/.cache/kforge/db")
    y = model(*arguments)                          # the kernels in order; intermediates are framework tensors

``kforge-opt --kforge-partition`` splits the payload's function into dispatches (a contraction with its
epilogue, a row kernel, an elementwise chain; docs/models.md) and writes each as a payload of its own, named by
its content (``k_<hash>``), with ``plan.json``: the calls and reshapes in order. Each dispatch gets a kernel
from the tuning database (a kforge-tune run directory per dispatch and target), else from a kforge-tune run
(a budget, or the heuristic's first correct kernel when tuning is off), else the naive kernel (slow but the
same computation as the reference every tuned kernel is verified against), said once.
"""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

from .artifact import load
from .tune import TuneError, TuneRun, _find_tool, tune

PLAN_FORMAT = "kforge-partition/1"
_TORCH_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "f64": "float64", "i64": "int64",
                "i32": "int32", "i16": "int16", "i8": "int8", "i1": "bool"}


class ModelError(Exception):
    """A payload kforge cannot partition or compile, or a model called with the wrong arguments."""


def _say(message):
    print(f"kforge: {message}", file=sys.stderr)


class Plan:
    """plan.json of a partitioned payload: arguments, dispatches (payload files), steps and outputs."""

    def __init__(self, directory):
        self.directory = directory
        path = os.path.join(directory, "plan.json")
        try:
            with open(path) as f:
                plan = json.load(f)
        except (OSError, json.JSONDecodeError) as error:
            raise ModelError(f"cannot read {path}: {error}") from None
        if plan.get("format") != PLAN_FORMAT:
            raise ModelError(f"{path} is not a {PLAN_FORMAT} plan")
        self.entry = plan["entry"]
        self.arguments = plan["arguments"]
        self.values = plan["values"]
        self.dispatches = plan["dispatches"]
        self.steps = plan["steps"]
        self.outputs = plan["outputs"]

    def payload(self, dispatch):
        return os.path.join(self.directory, dispatch["payload"])


def partition(payload, directory, *, tools_dir=None):
    """Partitions ``payload`` (a .mlir file with one public function) into ``directory``: one payload per
    dispatch, plan.json, and partitioned.mlir (the module with the entry as calls). Returns the Plan."""
    import hashlib
    os.makedirs(directory, exist_ok=True)
    try:
        with open(payload, "rb") as f:
            source = hashlib.sha256(f.read()).hexdigest()
    except OSError as error:
        raise ModelError(f"cannot read {payload}: {error}") from None
    # A plan made from this very payload by this kforge-opt is reused; a machine without kforge-opt (the GPU
    # machine) runs a plan partitioned elsewhere from the same payload. The stamp is written last, so a cut
    # partition is redone.
    stamp = os.path.join(directory, "source.sha256")
    try:
        kforge_opt = _find_tool("kforge-opt", tools_dir)
    except TuneError:
        kforge_opt = None
    source += " " + (_file_hash(kforge_opt) if kforge_opt else "")
    if os.path.exists(stamp):
        made = open(stamp).read().split()
        if made and made[0] == source.split()[0] and (kforge_opt is None or made[1:] == source.split()[1:]):
            return Plan(directory)
    if kforge_opt is None:
        raise ModelError(f"cannot partition {payload}: kforge-opt not found (and no plan made from it in {directory})")
    # The last plan's files go first: a dispatch of an older partition must not stay beside the new ones.
    for name in os.listdir(directory):
        if name in ("plan.json", "partitioned.mlir", "source.sha256") or \
                (name.startswith("k_") and name.endswith(".mlir")):
            os.remove(os.path.join(directory, name))
    command = [kforge_opt, os.fspath(payload), "--kforge-normalize-importer",
               f"--kforge-partition=split-dir={directory}", "-o", os.path.join(directory, "partitioned.mlir")]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = [l for l in result.stderr.strip().splitlines() if l.strip()]
        raise ModelError(f"cannot partition {payload}: " + ("\n".join(lines[:6]) or f"exit {result.returncode}"))
    plan = Plan(directory)
    with open(stamp, "w") as f:
        f.write(source + "\n")
    return plan


_build_ids = {}


def _kforge_build(tools_dir):
    """An identity of the kforge build in use (a hash of kforge-tune's binary): a database entry written by
    another build is re-verified before it is trusted."""
    return _file_hash(_find_tool("kforge-tune", tools_dir))


def _file_hash(path):
    path = os.path.realpath(path)
    if path not in _build_ids:
        import hashlib
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _build_ids[path] = digest.hexdigest()[:16]
    return _build_ids[path]


class TuningDatabase:
    """A directory of kforge-tune runs, one per dispatch and target: ``DB/<target>/<k_hash>/``.

    A dispatch's name is a hash of its content, so the same kernel in another model (or twice in one) is
    found again. An entry tuned for another chip lives under another target key; an entry from another
    kforge build is re-verified (kforge-tune --replay) before use, and set aside when that fails."""

    def __init__(self, path):
        self.path = os.path.expanduser(os.fspath(path))

    def run_dir(self, target_key, name):
        return os.path.join(self.path, target_key, name)

    def export_library(self, target_key, out_path, *, tools_dir=None, validate=True):
        """Writes this database's best schedules for ``target_key`` as one tuned library (see
        export_tuned_library); returns its summary."""
        return export_tuned_library(self.path, target_key, out_path, tools_dir=tools_dir, validate=validate)


def _target_key(target, chip, allow_tf32=False):
    """The database's key for kernels of this target: TF32-allowed kernels live apart (gpu-sm_90-tf32), so a
    later request that does not allow TF32 never gets one."""
    if target == "cpu":
        return "cpu"
    return f"gpu-{chip or 'default'}" + ("-tf32" if allow_tf32 else "")


TUNED_LIBRARY_FORMAT = "kforge-tuned/1"
_CONTENT_NAME = re.compile(r"k_[0-9a-f]{16}")
# A module's header before its attributes and region: `module [@name]`.
_MODULE_HEADER = re.compile(r"module(?:\s+@[\w$.-]+)?")


def export_tuned_library(db_path, target_key, out_path, *, tools_dir=None, validate=True):
    """Writes the best schedule of every entry ``DB/<target_key>/k_<hash>/`` as one file that
    ``kforge-opt --kforge-apply-tuned=library=FILE`` replays inside any pipeline (docs/models.md):

        module attributes {kforge.tuned_library = "kforge-tuned/1", kforge.target = "<key>"} {
          module @k_<hash> attributes {kforge.content_name = "k_<hash>", kforge.build = ..., kforge.time_ms = ...,
                                       transform.with_named_sequence} {
            <the body of the entry's best.mlir>
          }
        }

    Entries without a best schedule, or tuned for another target, are skipped and counted in a summary line on
    stderr. With ``validate`` (the default) the file is checked by kforge-opt (the apply pass reading it) before
    it replaces ``out_path``; a missing kforge-opt is then an error. Returns a dict: path, entries, skipped."""
    root = os.path.join(os.path.expanduser(os.fspath(db_path)), target_key)
    if not os.path.isdir(root):
        parent = os.path.dirname(root)
        keys = sorted(k for k in os.listdir(parent) if os.path.isdir(os.path.join(parent, k))) \
            if os.path.isdir(parent) else []
        raise ModelError(f"no entries for target {target_key} in {db_path}"
                         + (f" (it has {', '.join(keys)})" if keys else " (not a tuning database)"))
    kforge_opt = None
    if validate:
        try:
            kforge_opt = _find_tool("kforge-opt", tools_dir)
        except TuneError as error:
            raise ModelError(f"cannot validate the tuned library: {error} (or export without validation)") from None
    entries, skipped = [], {"no best kernel": 0, "another target": 0}
    for name in sorted(os.listdir(root)):
        run_dir = os.path.join(root, name)
        if not _CONTENT_NAME.fullmatch(name) or not os.path.isdir(run_dir):
            continue  # set-aside entries (k_<hash>.old-<time>) and anything else
        schedule = os.path.join(run_dir, "best.mlir")
        if not os.path.exists(schedule):
            skipped["no best kernel"] += 1
            continue
        try:
            with open(os.path.join(run_dir, "run.json")) as f:
                header = json.load(f)
        except (OSError, json.JSONDecodeError) as error:
            raise ModelError(f"database entry {run_dir} is unreadable ({error})") from None
        tf32 = bool((header.get("facts") or {}).get("allow_tf32"))
        if _target_key(header.get("target"), header.get("chip"), tf32) != target_key:
            skipped["another target"] += 1
            continue
        entries.append(_library_entry(name, run_dir, schedule, kforge_opt))
    text = (f"// A kforge tuned library: the best schedule of each entry of a tuning database for {target_key}, keyed\n"
            "// by the dispatch's content name (docs/models.md). Replay: kforge-opt MODEL --kforge-normalize-importer\n"
            "//   --kforge-partition --kforge-apply-tuned=\"library=THIS_FILE\"\n"
            f"module attributes {{kforge.target = {_mlir_string(target_key)}, "
            f"kforge.tuned_library = {_mlir_string(TUNED_LIBRARY_FORMAT)}}} {{\n"
            + "".join(entries) + "}\n")
    out_path = os.fspath(out_path)
    directory = os.path.dirname(os.path.abspath(out_path))
    os.makedirs(directory, exist_ok=True)
    temporary = os.path.join(directory, f".{os.path.basename(out_path)}.{os.getpid()}.tmp")
    with open(temporary, "w") as f:
        f.write(text)
    try:
        if kforge_opt:
            # The apply pass on an empty module reads the library as it would for a model: parse, format,
            # target, one content name per entry.
            result = subprocess.run([kforge_opt, "-", "-o", os.devnull,
                                     f'--kforge-apply-tuned=library="{temporary}" target={target_key}'],
                                    input="", capture_output=True, text=True)
            if result.returncode != 0:
                lines = [l for l in result.stderr.strip().splitlines() if l.strip()]
                raise ModelError("the tuned library does not parse (a bug of the export): "
                                 + ("\n".join(lines[:8]) or f"kforge-opt exit {result.returncode}"))
        os.replace(temporary, out_path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    said = ", ".join(f"{count} with {reason}" for reason, count in skipped.items() if count)
    _say(f"exported {len(entries)} schedules for {target_key} to {out_path}"
         + (f"; skipped {sum(skipped.values())} ({said})" if said else "")
         + ("" if kforge_opt else " (not validated)"))
    return {"path": out_path, "entries": len(entries), "skipped": sum(skipped.values()), "skipped_by_reason": skipped}


def _library_entry(name, run_dir, schedule, kforge_opt):
    """One entry of a tuned library: ``module @name attributes {...} { <best.mlir's body> }``, indented."""
    with open(schedule) as f:
        text = f.read()
    parts = _split_module(text)
    if not _is_transform_library(parts) and kforge_opt:
        # Not the plain form kforge-tune renders (attribute aliases, say): kforge-opt's printing of it is.
        result = subprocess.run([kforge_opt, schedule, "-mlir-print-local-scope"], capture_output=True, text=True)
        parts = _split_module(result.stdout) if result.returncode == 0 else None
    if not _is_transform_library(parts):
        raise ModelError(f"{schedule} is not one transform-library module (`module attributes "
                         "{transform.with_named_sequence} { ... }`)")
    attributes, body = parts
    best = {}
    try:
        with open(os.path.join(run_dir, "best.json")) as f:
            best = json.load(f)
    except (OSError, json.JSONDecodeError):
        try:
            best = TuneRun(run_dir).best or {}
        except (TuneError, OSError, ValueError):
            best = {}
    provenance = [f"kforge.content_name = {_mlir_string(name)}"]
    stamp = os.path.join(run_dir, "kforge-build")
    if os.path.exists(stamp):
        provenance.append(f"kforge.build = {_mlir_string(open(stamp).read().strip())}")
    if isinstance(best.get("time_ms"), (int, float)) and math.isfinite(best["time_ms"]):
        provenance.append(f"kforge.time_ms = {float(best['time_ms']):.6e} : f64")
    if isinstance(best.get("description"), str):
        provenance.append(f"kforge.actions = {_mlir_string(best['description'])}")
    if isinstance(best.get("payload_hash"), str):
        provenance.append(f"kforge.payload_hash = {_mlir_string(best['payload_hash'])}")
    attributes = ", ".join(provenance + ([attributes] if attributes else []))
    lines = [f"  module @{name} attributes {{{attributes}}} {{"]
    lines += [f"  {line}" if line.strip() else "" for line in body.strip("\n").splitlines()]
    lines.append("  }")
    return "\n".join(lines) + "\n"


def _split_module(text):
    """(the module's attributes, the module's body) of a file holding one module and nothing else but comments
    (``module [@name] [attributes {...}] {...}``), else None. Braces are counted outside strings and comments."""
    groups, depth, start, i = [], 0, None, 0  # the outermost brace groups: (open, close)
    while i < len(text):
        if text[i] == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text[i] == "{":
            if depth == 0:
                start = i
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth < 0:
                return None
            if depth == 0:
                groups.append((start, i))
        i += 1
    if depth != 0 or len(groups) not in (1, 2) or _code(text[groups[-1][1] + 1:]).strip():
        return None
    header = _code(text[:groups[0][0]]).strip()
    if len(groups) == 1:
        if not _MODULE_HEADER.fullmatch(header):
            return None
        attributes = ""
    else:
        if not _MODULE_HEADER.fullmatch(header.removesuffix("attributes").strip()) or \
                not header.endswith("attributes") or _code(text[groups[0][1] + 1:groups[1][0]]).strip():
            return None
        attributes = text[groups[0][0] + 1:groups[0][1]].strip()
    return attributes, text[groups[-1][0] + 1:groups[-1][1]]


def _is_transform_library(parts):
    return parts is not None and re.search(r"(?:^|[\s,])transform\.with_named_sequence(?:$|[\s,=])", parts[0])


def _code(text):
    """``text`` without its ``//`` comment lines (the headers _split_module reads have no strings)."""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("//"))


def _mlir_string(value):
    """``value`` as an MLIR string literal."""
    out = []
    for byte in value.encode():
        character = chr(byte)
        if character in '"\\' or byte < 0x20 or byte >= 0x7f:
            out.append(f"\\{byte:02X}")
        else:
            out.append(character)
    return '"' + "".join(out) + '"'


def db_main(argv=None):
    """scripts/kforge-db: ``kforge-db export DB --target KEY -o tuned.mlir``."""
    import argparse
    parser = argparse.ArgumentParser(prog="kforge-db", description="Tools for a kforge tuning database.")
    commands = parser.add_subparsers(dest="command", required=True)
    export = commands.add_parser(
        "export", help="write the best schedules for one target as a tuned library (kforge-opt "
        "--kforge-apply-tuned=library=FILE replays it)")
    export.add_argument("db", help="the tuning database's directory (DB/<target>/k_<hash>/)")
    export.add_argument("--target", required=True, help="the target key: cpu, or gpu-<chip> (gpu-sm_90)")
    export.add_argument("-o", "--output", required=True, help="the tuned library to write (.mlir)")
    export.add_argument("--tools-dir", help="where kforge-opt is (default: $KFORGE_BUILD_DIR/bin, else PATH)")
    export.add_argument("--no-validate", action="store_true",
                        help="write without checking the file with kforge-opt (a machine without it)")
    arguments = parser.parse_args(argv)
    try:
        export_tuned_library(arguments.db, arguments.target, arguments.output, tools_dir=arguments.tools_dir,
                             validate=not arguments.no_validate)
    except (ModelError, OSError) as error:
        print(f"kforge-db: error: {error}", file=sys.stderr)
        return 1
    return 0


def _usable_run(run_dir, target, chip, tools_dir, replay_check):
    """The TuneRun in ``run_dir`` when it holds a verified best kernel for this target and chip, else None
    (with the reason said)."""
    if not os.path.exists(os.path.join(run_dir, "db.jsonl")):
        return None
    try:
        run = TuneRun(run_dir)
        with open(os.path.join(run_dir, "run.json")) as f:
            header = json.load(f)
    except (TuneError, OSError, json.JSONDecodeError) as error:
        _say(f"database entry {run_dir} is unreadable ({error}); tuning again")
        return None
    if header.get("target") != target or (target == "gpu" and chip and header.get("chip") not in (None, chip)):
        _say(f"database entry {run_dir} was tuned for {header.get('target')} {header.get('chip')}; tuning again")
        return None
    if run.best is None:
        return None
    # A run carried without its kernels (scripts/gpu/kernelbench.sh packs records and best schedules, not
    # best/ or baseline/) is rebuilt from its best schedule and verified again, not tuned again.
    rebuild = not os.path.exists(os.path.join(run_dir, "best", "kernel.json"))
    if replay_check or rebuild:
        # Another kforge build, or no kernel: rebuild and re-verify the best schedule before trusting it.
        result = subprocess.run([_find_tool("kforge-tune", tools_dir), "--replay", run_dir, "--json"],
                                capture_output=True, text=True)
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            _say(f"database entry {run_dir} no longer applies ({lines[-1] if lines else 'replay failed'}); "
                 "tuning again")
            return None
    return run


class Model:
    """A partitioned payload with a kernel per dispatch: call it with the payload function's arguments
    (framework tensors, C-contiguous); returns its results (one, or a tuple). GPU kernels launch on the
    caller's current stream without waiting; intermediates are allocated by the framework."""

    def __init__(self, plan, kernels, sources, naive_reasons=None):
        self.plan = plan
        self.kernels = kernels  # dispatch name -> kforge.Artifact
        self.sources = sources  # dispatch name -> "database", "tuned", "first", "naive"
        self.naive_reasons = naive_reasons or {}  # dispatch name -> why it got no verified schedule, if known

    def __call__(self, *arguments):
        if len(arguments) != len(self.plan.arguments):
            raise ModelError(f"{self.plan.entry} takes {len(self.plan.arguments)} arguments, got {len(arguments)}")
        values = [None] * len(self.plan.values)
        for index, value in enumerate(arguments):
            values[index] = value
        for step in self.plan.steps:
            operands = [values[i] for i in step["operands"]]
            if step["kind"] in ("reshape", "slice"):
                source = operands[0]
                if step["kind"] == "slice":
                    source = source[tuple(slice(o, o + (n - 1) * s + 1, s)
                                          for o, n, s in zip(step["offsets"], step["sizes"], step["strides"]))]
                result = self.plan.values[step["results"][0]]
                values[step["results"][0]] = source.reshape(result["shape"])
                continue
            dispatch = self.plan.dispatches[step["dispatch"]]
            results = self.kernels[dispatch["name"]](*[_contiguous(v) for v in operands])
            if not isinstance(results, tuple):
                results = (results,)
            for index, result in zip(step["results"], results):
                values[index] = result
        outputs = []
        for index in self.plan.outputs:
            value = values[index]
            if index < len(arguments):  # an argument returned as is: a copy, as the payload's result is
                value = value.clone() if hasattr(value, "clone") else value.copy()
            outputs.append(value)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def describe(self):
        counts = {}
        for source in self.sources.values():
            counts[source] = counts.get(source, 0) + 1
        return f"{len(self.plan.steps)} steps, {len(self.kernels)} kernels ({counts})"


def _contiguous(value):
    return value.contiguous() if hasattr(value, "is_contiguous") and not value.is_contiguous() else value


def compile_payload(payload, directory, *, target="cpu", chip=None, db=None, tune_seconds=0, trials=None,
                    tools_dir=None, runtime=None, extra_args=(), plan_directory=None, allow_tf32=False):
    """Partitions ``payload``, gets a kernel for each dispatch, and returns a callable Model.

    ``tune_seconds`` > 0 tunes each dispatch missing from the database for up to that many seconds
    (kforge-tune's heuristic+evolve); 0 takes the heuristic's first correct kernel (a few trials). ``db`` (a
    directory) keeps every dispatch's run for reuse; without it the runs stay under ``directory``.
    ``plan_directory``: where the partition is kept (default ``directory``/plan); a plan made there from the
    same payload elsewhere is used as is on a machine without kforge-opt (the GPU machine). ``allow_tf32``
    (GPU only): fp32 matmuls may use TF32 tensor cores (kforge-tune --allow-tf32); their kernels are kept in the
    database apart from fp32 ones."""
    if target not in ("cpu", "gpu"):
        raise ModelError(f"target must be cpu or gpu, not {target!r}")
    if allow_tf32 and target != "gpu":
        raise ModelError("allow_tf32 is for the gpu target (the CPU has no TF32 units)")
    if allow_tf32:
        extra_args = list(extra_args) + ["--allow-tf32"]
    plan = partition(payload, plan_directory or os.path.join(directory, "plan"), tools_dir=tools_dir)
    database = TuningDatabase(db) if db else TuningDatabase(os.path.join(directory, "runs"))
    key = _target_key(target, chip, allow_tf32)
    version = _kforge_build(tools_dir)
    kernels, sources, naive_reasons = {}, {}, {}
    for dispatch in plan.dispatches:
        name = dispatch["name"]
        if name in kernels:
            continue
        run_dir = database.run_dir(key, name)
        run, source = _tuned_run(plan.payload(dispatch), run_dir, target, chip, version, tune_seconds, trials,
                                 tools_dir, extra_args)
        if run is not None and run.best is not None:
            kernels[name] = run.best_artifact(runtime=runtime)
        else:
            kernels[name] = _compile_naive(plan.payload(dispatch), os.path.join(directory, "naive", name), target,
                                           chip, tools_dir, runtime)
            source = "naive"
            memo = os.path.join(run_dir, _NO_KERNEL)
            if os.path.exists(memo):
                naive_reasons[name] = open(memo).read().strip()
        sources[name] = source
    return Model(plan, kernels, sources, naive_reasons)


_NO_KERNEL = "no-kernel"  # in a run directory: this build found no verified schedule (and why)


def _tuned_run(payload, run_dir, target, chip, version, tune_seconds, trials, tools_dir, extra_args):
    """(TuneRun or None, source) for one dispatch: the database's run when it holds a verified kernel of this
    build, else a new kforge-tune run. A dispatch this build could not tune is remembered, so a later process
    takes its naive kernel at once instead of tuning it again."""
    stamp = os.path.join(run_dir, "kforge-build")
    stale = not os.path.exists(stamp) or open(stamp).read().strip() != version
    memo = os.path.join(run_dir, _NO_KERNEL)
    if not stale and os.path.exists(memo):
        _say(f"{os.path.basename(run_dir)}: no verified schedule with this kforge build "
             f"({open(memo).read().strip()}); its naive kernel")
        return None, "naive"
    run = _usable_run(run_dir, target, chip, tools_dir, replay_check=stale)
    if run is not None:
        if stale:
            with open(stamp, "w") as f:
                f.write(version + "\n")
        return run, "database"
    if os.path.exists(run_dir):  # keep what was there: set aside, never deleted
        shutil.move(run_dir, f"{run_dir}.old-{int(time.time())}")
    os.makedirs(os.path.dirname(run_dir), exist_ok=True)
    arguments = list(extra_args)
    if chip and target == "gpu":
        arguments += ["--chip", chip]
    first = ["--early-stop", "1"]
    reason = ""
    try:
        if tune_seconds and tune_seconds > 0:
            source = "tuned"
            run = tune(payload, run_dir, target=target, trials=trials or 1000, time_budget=tune_seconds,
                       extra_args=arguments, tools_dir=tools_dir)
            if run.best is None:
                # The budget ended before any candidate was verified (large kernels compile for seconds): the
                # heuristic's first few, without a clock.
                tried = sum(r.get("kind") == "candidate" for r in run.records)
                run = tune(payload, run_dir, target=target, trials=tried + 4, resume=True,
                           extra_args=arguments + first, tools_dir=tools_dir)
        else:
            source = "first"
            run = tune(payload, run_dir, target=target, trials=trials or 4, extra_args=arguments + first,
                       tools_dir=tools_dir)
        if run.best is None:
            failed = [r for r in run.records if r.get("kind") == "candidate"]
            reason = f"{len(failed)} candidates, none verified"
    except TuneError as error:
        run, source, reason = None, "naive", f"kforge-tune: {error}"
    os.makedirs(run_dir, exist_ok=True)
    if reason:
        _say(f"{os.path.basename(run_dir)}: {reason}; using its naive kernel")
        with open(memo, "w") as f:
            f.write(reason.splitlines()[0] + "\n")
    with open(stamp, "w") as f:
        f.write(version + "\n")
    return run, source


def _compile_naive(payload, directory, target, chip, tools_dir, runtime):
    # The GPU's naive mapping (one thread per output element); on the CPU the untransformed payload.
    command = [_find_tool("kforge-compile", tools_dir), payload, "--target", target, "-o", directory]
    if target == "gpu":
        command.append("--naive")
    if chip and target == "gpu":
        command += ["--chip", chip]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines()
        raise ModelError(f"cannot compile {payload}, not even naively: {lines[-1] if lines else result.returncode}")
    return load(directory, runtime=runtime)
