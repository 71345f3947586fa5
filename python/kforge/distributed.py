"""Tuning many payloads at once on a Ray cluster (one machine or many).

    import kforge.distributed
    summary = kforge.distributed.tune_many(["a.mlir", "b.mlir"], "runs/many", target="cpu", trials=16,
                                           measurers=2)                  # ray.init() here; address= for a cluster
    summary["payloads"][0]["best_ms"]

kforge-tune still does the search's work; this module only schedules it (docs/distributed.md):

- set-up and end of each payload's run: ``kforge-tune PAYLOAD -o RUN --no-search`` (baseline, reference check;
  later ``--resume``: export the best, the report), on a measurer (the baseline is timed on its device);
- proposals: ``kforge-tune -o RUN --propose N --pending FILE`` (the policy, given the database and what is in
  flight), in the driver: milliseconds, no GPU;
- compiles: ``kforge-tune -o RUN --compile-trial DIR`` as Ray CPU tasks on any node (kforge-compile with the run's
  limits and its cache, RUN/cache, keyed by payload, schedule, options, versions and chip);
- measurements: one ``Measurer`` actor per GPU (``num_gpus=1``; CPU measurers for the CPU target), each owning
  ``kforge-tune -o RUN --trial-server`` processes, each of which owns one ``kforge-run --serve``;
- records: one ``DatabaseWriter`` actor, on the driver's node, appends each record once (by id), whole lines,
  fsynced, in kforge-tune's format, holding each run directory's lock while it writes.

A measurer, compile worker or writer that dies costs only its in-flight trial, which is retried; the actors are
restarted by Ray. ``resume=True`` continues every run directory after a driver that stopped or was killed.
"""

import collections
import fcntl
import json
import os
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from .tune import TuneError, _find_tune
from .tune_many_summary import summary_markdown

ray = None  # imported on first use (import kforge stays fast; the rest of kforge does not need Ray)


def _import_ray():
    global ray
    if ray is None:
        try:
            import ray as module
            import ray.util.scheduling_strategies  # noqa: F401 (NodeAffinitySchedulingStrategy)
        except ImportError:
            raise DistributedError("kforge.distributed needs Ray: scripts/install-python-deps.sh installs it "
                                   "(pinned in python/requirements-distributed.txt)")
        ray = module
    return ray

__all__ = ["DistributedError", "tune_many", "read_records", "TRIAL_RETRIES"]

TRIAL_RETRIES = 2  # a trial whose measurer or compile worker died is tried again this many times, then dropped
RAY_TIMEOUT_S = 120  # the longest wait on a call that is not a trial (set-up, an append, an actor's start)


class DistributedError(Exception):
    """Bad input (a missing payload, a bad address, a run directory that exists without resume), or a cluster that
    cannot be reached: the message says which."""


def read_records(run_dir):
    """The whole records of RUN/db.jsonl (a last line cut short is not a record)."""
    path = os.path.join(run_dir, "db.jsonl")
    if not os.path.exists(path):
        return []
    with open(path, "rb") as f:
        data = f.read()
    return [json.loads(line) for line in data[:data.rfind(b"\n") + 1].splitlines() if line.strip()]


def _run(command, timeout):
    """Runs ``command``; (exit code, stdout, stderr); a timeout is exit code 124."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return result.returncode, result.stdout, result.stderr
    except subprocess.TimeoutExpired as e:
        return 124, e.stdout or "", f"timed out after {timeout} s: {' '.join(command)}"


def _last_error(stderr, fallback):
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line]
    return (errors or lines or [fallback])[-1]


# --------------------------------------------------------------------------------------------------------------
# Ray tasks and actors (defined on first use: importing this module needs no Ray)
# --------------------------------------------------------------------------------------------------------------

def _compile_trial(tune, run_dir, candidate_dir, extra_args, timeout):
    """A Ray CPU task: kforge-tune --compile-trial. Returns the compile outcome's summary."""
    start = time.monotonic()
    rc, _, stderr = _run([tune, "-o", run_dir, "--compile-trial", candidate_dir, *extra_args], timeout)
    if rc != 0:
        return {"ok": False, "error": _last_error(stderr, f"kforge-tune --compile-trial exited with {rc}"),
                "node": _node()}
    with open(os.path.join(candidate_dir, "compile.json")) as f:
        outcome = json.load(f)
    return {"ok": True, "compiled": outcome.get("compiled"), "seconds": time.monotonic() - start, "node": _node()}


def _node():
    return socket.gethostname()


def _die_with_parent():
    """In a child: SIGKILL when the measurer that started it dies (a killed measurer leaves no trial server that
    goes on measuring beside its retry; the server's kforge-run --serve ends at the end of its input)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class _TrialServer:
    """One ``kforge-tune -o RUN --trial-server`` process (and through it one ``kforge-run --serve``)."""

    def __init__(self, tune, run_dir, extra_args):
        self.log = open(os.path.join(run_dir, f"trial-server-{os.getpid()}.log"), "ab")
        self.process = subprocess.Popen([tune, "-o", run_dir, "--trial-server", *extra_args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=self.log, start_new_session=True,
                                        preexec_fn=_die_with_parent)
        self.buffer = b""

    def request(self, request, timeout):
        """The answer to one request (a dict), or TuneError when the server dies or does not answer in time."""
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except BrokenPipeError:
            raise TuneError(f"the trial server exited ({self.process.poll()})")
        deadline = time.monotonic() + timeout
        fd = self.process.stdout.fileno()
        with selectors.DefaultSelector() as selector:
            selector.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.close()
                    raise TuneError(f"the trial server did not answer within {timeout:.0f} s")
                if not selector.select(left):
                    continue
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    self.close()
                    raise TuneError(f"the trial server exited ({self.process.poll()})")
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


class _Measurer:
    """A Ray actor that measures: one per GPU (``num_gpus=1``: Ray sets CUDA_VISIBLE_DEVICES, so its kforge-run
    sees that GPU as device 0), or a CPU measurer. It keeps a trial server per run directory it measured for, the
    most recent ``keep`` of them (each holds its reference and seed inputs in memory)."""

    def __init__(self, tune, extra_args, keep=4):
        self.tune, self.extra_args, self.keep = tune, list(extra_args), keep
        self.servers = collections.OrderedDict()

    def pid(self):
        return os.getpid()

    def node(self):
        return _node()

    def no_search(self, payload, run_dir, target, resume, policy_args, timeout):
        """kforge-tune --no-search: the set-up (baseline, reference check) or, with ``resume``, the end (export,
        report). (exit code, last error line)."""
        self._drop(run_dir)
        command = [self.tune, payload, "-o", run_dir, "--target", target, "--no-search", "--quiet",
                   *policy_args, *self.extra_args]
        if resume:
            command.append("--resume")
        rc, _, stderr = _run(command, timeout)
        return rc, (_last_error(stderr, f"kforge-tune exited with {rc}") if rc else "")

    def measure(self, run_dir, request, timeout):
        """The record (a dict) kforge-tune made of one compiled candidate, or {"error": why}."""
        server = self.servers.pop(run_dir, None)
        if server is None or server.process.poll() is not None:
            server = _TrialServer(self.tune, run_dir, self.extra_args)
        self.servers[run_dir] = server
        while len(self.servers) > self.keep:
            self.servers.popitem(last=False)[1].close()
        try:
            return server.request(request, timeout)
        except TuneError as e:
            self.servers.pop(run_dir, None)
            return {"error": str(e)}

    def _drop(self, run_dir):
        server = self.servers.pop(run_dir, None)
        if server:
            server.close()

    def close(self):
        for run_dir in list(self.servers):
            self._drop(run_dir)


class _DatabaseWriter:
    """The one Ray actor that appends records: each run directory's db.jsonl, each record once (by its id), a
    whole line with one write, fsynced. It holds each run directory's lock (RUN/lock, as kforge-tune does) while
    it writes there, so no kforge-tune writes the same run meanwhile. Restarted by Ray after a crash: it reads the
    ids back, cuts off a line a crash left unfinished, and takes the locks again on the next append."""

    def __init__(self):
        self.runs = {}  # run_dir -> (lock fd, set of ids)

    def pid(self):
        return os.getpid()

    def open(self, run_dir):
        if run_dir in self.runs:
            return len(self.runs[run_dir][1])
        lock = os.open(os.path.join(run_dir, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            raise TuneError(f"{run_dir} is in use by another kforge-tune (it holds {run_dir}/lock)")
        path = os.path.join(run_dir, "db.jsonl")
        ids = set()
        with open(path, "a+b") as f:
            f.seek(0)
            data = f.read()
            complete = data.rfind(b"\n") + 1
            if complete < len(data):  # a crash mid-append: never a record
                f.truncate(complete)
                os.fsync(f.fileno())
            for line in data[:complete].splitlines():
                if line.strip():
                    ids.add(json.loads(line)["id"])
        self.runs[run_dir] = (lock, ids)
        return len(ids)

    def append(self, run_dir, record):
        """Appends ``record`` (a kforge-tune-record/1 object) unless its id is there; True when written."""
        self.open(run_dir)
        ids = self.runs[run_dir][1]
        if record.get("format") != "kforge-tune-record/1" or not isinstance(record.get("id"), int):
            raise TuneError(f"not a tuning record: {str(record)[:200]}")
        if record["id"] in ids:
            return False
        line = (json.dumps(record, allow_nan=False, separators=(",", ":"), sort_keys=True) + "\n").encode()
        fd = os.open(os.path.join(run_dir, "db.jsonl"), os.O_WRONLY | os.O_APPEND)
        try:
            end = os.lseek(fd, 0, os.SEEK_END)
            try:
                written = os.write(fd, line)
                if written != len(line):
                    raise OSError(f"a short write ({written} of {len(line)} bytes)")
                os.fsync(fd)
            except OSError:
                os.ftruncate(fd, end)  # all of the record or none of it
                raise
        finally:
            os.close(fd)
        ids.add(record["id"])
        return True

    def close(self, run_dir):
        entry = self.runs.pop(run_dir, None)
        if entry:
            os.close(entry[0])  # releases the lock


_actors = {}


def _remote_classes():
    """The Ray remote versions of the task and the actors (made once, after Ray is imported)."""
    if not _actors:
        _actors["compile"] = ray.remote(max_retries=3, num_cpus=1)(_compile_trial)
        _actors["measurer"] = ray.remote(max_restarts=-1, max_task_retries=0)(_Measurer)
        _actors["writer"] = ray.remote(max_restarts=-1, max_task_retries=3, num_cpus=0)(_DatabaseWriter)
    return _actors


# --------------------------------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------------------------------

class _Payload:
    """One payload's run as the driver tracks it."""

    def __init__(self, name, path, run_dir):
        self.name, self.path, self.run_dir = name, path, run_dir
        self.state = "setting-up"  # setting-up, tuning, finishing, done, error
        self.error = None
        self.baseline_ms = self.best_ms = None
        self.best_record = None
        self.done = self.failures = self.correct = self.lost = 0
        self.trials_now = 0
        self.inflight = {}  # id -> proposal (the --propose line)
        self.ready = collections.deque()  # ids compiled, waiting for a measurer
        self.attempts = collections.Counter()
        self.hashes = {}  # schedule_hash -> id of the records
        self.next_id = 1
        self.start = self.end = None
        self.stop_reason = None
        self.exhausted = False

    def load(self, records):
        for r in records:
            self.next_id = max(self.next_id, r["id"] + 1)
            if r.get("kind") == "baseline":
                self.baseline_ms = r.get("time_ms")
                continue
            self.count(r)
        self.best_ms = min(self.baseline_ms, self.best_record["time_ms"]) if self.best_record else self.baseline_ms

    def count(self, r):
        self.done += 1
        self.hashes[r.get("schedule_hash", "")] = r["id"]
        if r.get("status") == "correct" and r.get("time_ms"):
            self.correct += 1
            if not self.best_record or r["time_ms"] < self.best_record["time_ms"]:
                self.best_record = r
        else:
            self.failures += 1


def _check_address(address, timeout=5.0):
    """A cluster address must answer before ray.init is asked to join it (ray.init retries for a long time)."""
    if address in (None, "", "auto", "local"):
        return
    target = address.split("://", 1)[-1]
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise DistributedError(f"bad --ray address '{address}' (expected HOST:PORT, ray://HOST:PORT or auto)")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise DistributedError(f"cannot reach the Ray cluster at {address}: {e}")


def _names(paths):
    """A run directory name per payload: its stem, made unique."""
    names, seen = [], collections.Counter()
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0] or "payload"
        seen[stem] += 1
        names.append(stem if seen[stem] == 1 else f"{stem}-{seen[stem]}")
    return names


def _print_event(event):
    if not event.get("quiet"):
        print(event["line"], file=sys.stderr, flush=True)


def tune_many(payloads, output, *, target=None, trials=16, time_budget=0, measurers=None, address=None,
              resume=False, policy=None, seed=None, batch=4, extra_args=(), tools_dir=None, on_event=_print_event,
              ray_init=None, shutdown=None):
    """Tunes each payload into ``output/<name>`` (a kforge-tune run directory) on a Ray cluster; writes
    ``output/summary.json`` and ``output/summary.md`` and returns the summary.

    ``target``: "cpu" or "gpu" (default: "gpu" when the cluster has GPUs). ``trials`` and ``time_budget`` (seconds
    of search, 0: none) are each payload's budget, as kforge-tune's --trials and --time-budget. ``measurers``:
    measuring actors (default: one per GPU; 2 on the CPU target). ``address``: a Ray cluster (None: Ray on this
    machine, started here unless one is already initialised). ``batch``: a payload's trials in flight at most
    (proposed before the ones before them were measured). ``extra_args`` go to every kforge-tune (--seeds, --reps,
    --compile-timeout, --run-timeout, ...). ``on_event`` gets each event (a dict with "kind" and "line")."""
    if not payloads:
        raise DistributedError("no payloads given")
    tune = _find_tune(tools_dir)
    paths = [os.path.abspath(p) for p in payloads]
    for given, path in zip(payloads, paths):
        if not os.path.isfile(path):
            raise DistributedError(f"no such payload: {given}")
    if target not in (None, "cpu", "gpu"):
        raise DistributedError(f"unknown target '{target}' (expected cpu or gpu)")
    if trials < 1 or time_budget < 0 or batch < 1 or (measurers is not None and measurers < 1):
        raise DistributedError("--trials, --measurers and the batch must be at least 1, --time-budget 0 or more")
    output = os.path.abspath(output)
    runs = [_Payload(name, path, os.path.join(output, name)) for name, path in zip(_names(paths), paths)]
    for run in runs:
        if os.path.exists(os.path.join(run.run_dir, "db.jsonl")) and not resume:
            raise DistributedError(f"{run.run_dir} already holds a tuning database: --resume continues it, or "
                                   f"choose another output directory")
    _check_address(address)
    _import_ray()
    started_ray = False
    if not ray.is_initialized():
        kwargs = dict(ray_init or {})
        kwargs.setdefault("include_dashboard", False)
        kwargs.setdefault("log_to_driver", False)
        # Workers import kforge.distributed: on this machine from this checkout, on a cluster uploaded by Ray.
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        if address in (None, "", "local"):
            path = os.pathsep.join(p for p in (package, os.environ.get("PYTHONPATH")) if p)
            kwargs.setdefault("runtime_env", {"env_vars": {"PYTHONPATH": path}})
        else:
            import kforge
            kwargs.setdefault("runtime_env", {"py_modules": [kforge]})
        try:
            ray.init(address=address, **kwargs)
        except Exception as e:  # ConnectionError, RuntimeError, ValueError: all say why
            raise DistributedError(f"cannot start or join the Ray cluster ({address or 'local'}): {e}")
        started_ray = True
    try:
        return _Driver(tune, runs, output, target, trials, time_budget, measurers, resume, policy, seed, batch,
                       list(extra_args), on_event).run()
    finally:
        if started_ray if shutdown is None else shutdown:
            ray.shutdown()


class _Driver:
    def __init__(self, tune, runs, output, target, trials, time_budget, measurers, resume, policy, seed, batch,
                 extra_args, on_event):
        self.tune, self.runs, self.output = tune, runs, output
        gpus = int(ray.cluster_resources().get("GPU", 0))
        self.target = target or ("gpu" if gpus else "cpu")
        if self.target == "gpu" and not gpus:
            raise DistributedError("--target gpu, but the Ray cluster has no GPU")
        self.trials, self.time_budget, self.resume, self.batch = trials, time_budget, resume, batch
        self.extra_args, self.on_event = extra_args, on_event
        self.policy_args = (["--policy", policy] if policy else []) + (["--seed", str(seed)] if seed is not None else [])
        count = measurers or (gpus if self.target == "gpu" else 2)
        self.start = time.monotonic()
        classes = _remote_classes()
        options = {"num_gpus": 1, "num_cpus": 0} if self.target == "gpu" else {"num_cpus": 0}
        self.measurers = [classes["measurer"].options(**options).remote(tune, extra_args) for _ in range(count)]
        here = ray.get_runtime_context().get_node_id()
        strategy = ray.util.scheduling_strategies.NodeAffinitySchedulingStrategy(node_id=here, soft=False)
        self.writer = classes["writer"].options(scheduling_strategy=strategy).remote()
        self.pids = ray.get([m.pid.remote() for m in self.measurers], timeout=RAY_TIMEOUT_S)
        self.writer_pid = ray.get(self.writer.pid.remote(), timeout=RAY_TIMEOUT_S)
        self.idle = list(range(count))
        self.affinity = collections.defaultdict(set)  # measurer -> run dirs it has a trial server for
        self.futures = {}  # ObjectRef -> (kind, run, id or measurer)
        self.compile = classes["compile"]
        self.run_timeout = self._flag("--run-timeout", 300)
        self.compile_timeout = self._flag("--compile-timeout", 120)

    def _flag(self, name, default):
        args = self.extra_args
        for i, a in enumerate(args):
            if a == name and i + 1 < len(args):
                return float(args[i + 1])
            if a.startswith(name + "="):
                return float(a.split("=", 1)[1])
        return default

    def event(self, kind, line, **fields):
        fields.update(kind=kind, line=f"[{time.monotonic() - self.start:6.1f}s] {line}")
        self.on_event(fields)

    # ---- the loop -----------------------------------------------------------------------------------------
    def run(self):
        self.event("start", f"kforge-tune-many: {len(self.runs)} payloads, {len(self.measurers)} "
                   f"{self.target.upper()} measurers (pids {', '.join(map(str, self.pids))}), "
                   f"{int(ray.cluster_resources().get('CPU', 0))} CPUs for compiles", measurer_pids=self.pids,
                   writer_pid=self.writer_pid)
        os.makedirs(self.output, exist_ok=True)
        self.setups = collections.deque(self.runs)
        while any(r.state not in ("done", "error") for r in self.runs):
            self.schedule()
            if not self.futures:
                raise DistributedError("nothing left to wait for, yet some payloads are not finished (a bug)")
            ready, _ = ray.wait(list(self.futures), num_returns=1, timeout=1.0)
            for ref in ready:
                self.finished(ref)
        summary = self.summary()
        for m in self.measurers:
            m.close.remote()
        return summary

    def schedule(self):
        # Set-ups and ends go to idle measurers (the baseline is timed on the measurer's device).
        for run in self.runs:
            if run.state == "tuning":
                self.refill(run)
        while self.idle:
            m = self.idle[0]
            work = self.next_setup() or self.next_finish() or self.next_trial(m)
            if not work:
                break
            self.idle.pop(0)
            kind, run, payload = work
            if kind == "measure":
                ref = self.measurers[m].measure.remote(run.run_dir, payload, self.run_timeout + 120)
                self.affinity[m].add(run.run_dir)
                self.event("dispatch", f"{run.name}: trial {payload['id']} to measurer {m}", quiet=True,
                           payload=run.name, id=payload["id"], measurer=m)
            else:
                resume = kind == "finish" or self.resume and os.path.exists(os.path.join(run.run_dir, "db.jsonl"))
                ref = self.measurers[m].no_search.remote(run.path, run.run_dir, self.target, resume, self.policy_args,
                                                         600 + self.run_timeout)
                self.affinity[m].discard(run.run_dir)
            self.futures[ref] = (kind, run, m, payload)

    def next_setup(self):
        while self.setups:
            run = self.setups.popleft()
            return "setup", run, None
        return None

    def next_finish(self):
        for run in self.runs:
            if run.state == "tuning" and run.stop_reason and not run.inflight:
                run.state = "finishing"
                self.writer_call("close", run, run.run_dir)
                return "finish", run, None
        return None

    def next_trial(self, m):
        # A payload whose trial server this measurer already runs first; then the one waiting longest.
        candidates = [r for r in self.runs if r.state == "tuning" and r.ready]
        if not candidates:
            return None
        candidates.sort(key=lambda r: (r.run_dir not in self.affinity[m], r.trials_now))
        run = candidates[0]
        trial = run.ready.popleft()
        proposal = run.inflight[trial]
        left = self.time_budget - (time.monotonic() - run.start) if self.time_budget else 0
        request = {"dir": os.path.join(run.run_dir, "candidates", str(trial)), "id": trial,
                   "parent": run.hashes.get(proposal.get("parent_hash")), "baseline_ms": run.baseline_ms,
                   "best_ms": run.best_ms, "budget_left_s": max(left, 1e-3) if self.time_budget else 0}
        return "measure", run, request

    def refill(self, run):
        """Proposes and starts compiling up to the payload's batch, within its budgets."""
        if not run.stop_reason:
            if run.done >= self.trials:
                run.stop_reason = "trial budget reached"
            elif self.time_budget and time.monotonic() - run.start >= self.time_budget:
                run.stop_reason = "time budget reached"
                for trial in list(run.ready):  # compiled, not measured: not recorded (a resume proposes them again)
                    run.inflight.pop(trial, None)
                run.ready.clear()
            elif run.exhausted and not run.inflight:
                run.stop_reason = "the policy has nothing new to try"
        if run.stop_reason or run.exhausted:
            return
        want = min(self.batch - len(run.inflight), self.trials - run.done - len(run.inflight))
        if want <= 0:
            return
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", dir=run.run_dir, prefix=".pending-",
                                         delete=False) as pending:
            for proposal in run.inflight.values():
                pending.write(json.dumps(proposal) + "\n")
        try:
            rc, out, err = _run([self.tune, "-o", run.run_dir, "--propose", str(want), "--pending", pending.name,
                                 *self.extra_args], RAY_TIMEOUT_S)
        finally:
            os.unlink(pending.name)
        if rc != 0:
            run.state, run.error = "error", _last_error(err, f"kforge-tune --propose exited with {rc}")
            self.event("error", f"{run.name}: {run.error}")
            return
        proposals = [json.loads(line) for line in out.splitlines() if line.strip()]
        if not proposals:
            run.exhausted = True
            if not run.inflight:
                run.stop_reason = "the policy has nothing new to try"
            return
        for proposal in proposals:
            trial = run.next_id
            run.next_id += 1
            directory = os.path.join(run.run_dir, "candidates", str(trial))
            shutil.rmtree(directory, ignore_errors=True)  # left by a driver that stopped before recording it
            os.makedirs(directory)
            with open(os.path.join(directory, "proposal.json"), "w") as f:
                json.dump(proposal, f)
            run.inflight[trial] = proposal
            self.submit_compile(run, trial)

    def submit_compile(self, run, trial):
        directory = os.path.join(run.run_dir, "candidates", str(trial))
        ref = self.compile.remote(self.tune, run.run_dir, directory, self.extra_args, self.compile_timeout + 60)
        self.futures[ref] = ("compile", run, None, trial)

    def finished(self, ref):
        kind, run, m, payload = self.futures.pop(ref)
        if m is not None:
            self.idle.append(m)
        try:
            result = ray.get(ref, timeout=RAY_TIMEOUT_S)
        except (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.RayTaskError,
                ray.exceptions.GetTimeoutError) as e:
            self.died(kind, run, m, payload, e)
            return
        if kind == "setup":
            self.set_up(run, result)
        elif kind == "finish":
            self.ended(run, result)
        elif kind == "compile":
            self.compiled(run, payload, result)
        else:
            self.measured(run, payload, result)

    def died(self, kind, run, m, payload, error):
        what = type(error).__name__
        if m is not None:
            self.affinity[m].clear()  # restarted by Ray: its trial servers are gone
            self.event("measurer-died", f"measurer {m} died ({what}); Ray restarts it", measurer=m)
        if kind in ("setup", "finish"):
            run.attempts[kind] += 1
            if run.attempts[kind] > TRIAL_RETRIES:
                run.state, run.error = "error", f"{kind} failed: {what}"
            elif kind == "setup":
                self.setups.append(run)
            else:
                run.state = "tuning"
            return
        trial = payload["id"] if kind == "measure" else payload
        run.attempts[trial] += 1
        if run.attempts[trial] > TRIAL_RETRIES:
            run.inflight.pop(trial, None)
            run.lost += 1
            self.event("trial-lost", f"{run.name}: trial {trial} dropped after {TRIAL_RETRIES} retries ({what}); "
                       f"not recorded", payload=run.name, id=trial)
            return
        self.event("trial-retry", f"{run.name}: trial {trial} retried ({kind} lost: {what})", payload=run.name,
                   id=trial)
        if kind == "measure":
            run.ready.appendleft(trial)
        else:
            self.submit_compile(run, trial)

    def set_up(self, run, result):
        rc, error = result
        if rc != 0:
            run.state, run.error = "error", error
            self.event("error", f"{run.name}: {error}", payload=run.name)
            return
        try:
            run.load(read_records(run.run_dir))
            self.writer_call("open", run, run.run_dir)
        except (TuneError, ray.exceptions.RayError, DistributedError, ValueError) as e:
            run.state, run.error = "error", str(e)
            self.event("error", f"{run.name}: {e}", payload=run.name)
            return
        run.state, run.start = "tuning", time.monotonic()
        self.event("setup", f"{run.name}: baseline {run.baseline_ms:.3f} ms"
                   + (f", resuming after {run.done} trials" if run.done else ""), payload=run.name)

    def writer_call(self, method, run, *args, what=None):
        """The database writer's `method`, again after the writer died (Ray restarts it; open takes the run's
        lock again, append is idempotent by id, close is safe to repeat): a writer killed between two calls,
        or during one, costs no record and no run. Raises DistributedError when it keeps dying."""
        what = what or f"{method} of {run.name}"
        for _ in range(TRIAL_RETRIES + 2):
            try:
                return ray.get(getattr(self.writer, method).remote(*args), timeout=RAY_TIMEOUT_S)
            except ray.exceptions.RayActorError:
                self.event("writer-died", f"the database writer died; retrying {what}")
        raise DistributedError(f"cannot finish {what}: the database writer keeps dying")

    def compiled(self, run, trial, result):
        if not result.get("ok"):
            run.inflight.pop(trial, None)
            run.lost += 1
            self.event("trial-lost", f"{run.name}: trial {trial} not compiled: {result.get('error')}",
                       payload=run.name, id=trial)
            return
        if run.stop_reason:  # the time budget ran out while it compiled
            run.inflight.pop(trial, None)
            return
        run.ready.append(trial)

    def measured(self, run, request, record):
        trial = request["id"]
        if "error" in record:
            run.inflight.pop(trial, None)
            run.lost += 1
            self.event("trial-lost", f"{run.name}: trial {trial} not measured: {record['error']}", payload=run.name,
                       id=trial)
            return
        self.writer_call("append", run, run.run_dir, record, what=f"the append of {run.name} trial {trial}")
        run.inflight.pop(trial, None)
        run.count(record)
        run.trials_now += 1
        if record.get("status") == "correct" and record.get("time_ms"):
            run.best_ms = min(run.best_ms, record["time_ms"])
        status = record.get("status")
        timing = f" {record['time_ms']:.3f} ms ({run.baseline_ms / record['time_ms']:.2f}x)" \
            if status == "correct" and record.get("time_ms") else ""
        best = run.baseline_ms / run.best_ms if run.best_ms else 0
        self.event("trial", f"{run.name}: trial {trial} {status}{timing} | {run.done}/{self.trials} | best "
                   f"{best:.2f}x | {record.get('description', '')}", payload=run.name, id=trial, status=status,
                   record=record)

    def ended(self, run, result):
        rc, error = result
        run.end = time.monotonic()
        if rc != 0 and run.done:
            run.state, run.error = "error", f"the end (export, report) failed: {error}"
            self.event("error", f"{run.name}: {run.error}", payload=run.name)
            return
        run.state = "done"
        best = f"best {run.baseline_ms / run.best_ms:.2f}x ({run.best_ms:.3f} ms)" if run.best_record else \
            "no correct kernel"
        self.event("done", f"{run.name}: stopped: {run.stop_reason}; {run.done} trials, {best}", payload=run.name)

    # ---- the summary --------------------------------------------------------------------------------------
    def summary(self):
        wall = time.monotonic() - self.start
        rows = []
        for run in self.runs:
            best = run.best_record
            rows.append({
                "name": run.name, "payload": run.path, "run_dir": run.run_dir, "state": run.state,
                "error": run.error, "stopped": run.stop_reason, "trials": run.done, "trials_this_run": run.trials_now,
                "failures": run.failures, "lost": run.lost, "baseline_ms": run.baseline_ms,
                "best_ms": best["time_ms"] if best else None,
                "speedup_vs_baseline": run.baseline_ms / best["time_ms"] if best and run.baseline_ms else None,
                "best_id": best["id"] if best else None, "best_schedule": best.get("description") if best else None,
                "search_s": (run.end - run.start) if run.start and run.end else None})
        trials = sum(r["trials_this_run"] for r in rows)
        summary = {"format": "kforge-tune-many/1", "target": self.target, "measurers": len(self.measurers),
                   "cpus": int(ray.cluster_resources().get("CPU", 0)), "trials_per_payload": self.trials,
                   "time_budget_s": self.time_budget, "wall_s": wall, "trials": trials,
                   "trials_per_minute": trials * 60.0 / wall if wall > 0 else 0, "payloads": rows}
        with open(os.path.join(self.output, "summary.json"), "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")
        with open(os.path.join(self.output, "summary.md"), "w") as f:
            f.write(summary_markdown(summary))
        self.event("summary", f"kforge-tune-many: {trials} trials in {wall:.1f} s ({summary['trials_per_minute']:.1f} "
                   f"per minute); {sum(r['state'] == 'done' for r in rows)}/{len(rows)} payloads done; "
                   f"{os.path.join(self.output, 'summary.md')}")
        return summary


def main(argv=None):
    """scripts/kforge-tune-many's command line."""
    import argparse
    parser = argparse.ArgumentParser(prog="kforge-tune-many", description="Tune many payloads at once on a Ray "
                                     "cluster: one kforge-tune run directory per payload, plus summary.json/.md.",
                                     epilog="Arguments after -- go to every kforge-tune (e.g. -- --seeds 3 --reps 10).")
    parser.add_argument("payloads", nargs="+", help="payloads (.mlir, linalg on tensors)")
    parser.add_argument("-o", "--output", required=True, help="output directory: OUTPUT/<payload name>/, summary")
    parser.add_argument("--ray", default=None, metavar="ADDRESS", help="a Ray cluster (HOST:PORT, ray://..., auto); "
                        "default: Ray on this machine")
    parser.add_argument("--target", choices=("cpu", "gpu"), default=None,
                        help="default: gpu when the cluster has GPUs")
    parser.add_argument("--trials", type=int, default=16, help="each payload's trial budget (default 16)")
    parser.add_argument("--time-budget", type=float, default=0, help="each payload's seconds of search (0: none)")
    parser.add_argument("--measurers", type=int, default=None, help="measuring actors (default: one per GPU; 2 on "
                        "the CPU)")
    parser.add_argument("--batch", type=int, default=4, help="a payload's trials in flight at most (default 4)")
    parser.add_argument("--policy", default=None, help="kforge-tune's --policy (default heuristic+evolve)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--num-cpus", type=int, default=None, help="local Ray only: CPUs it may use")
    parser.add_argument("--resume", action="store_true", help="continue the run directories in OUTPUT")
    parser.add_argument("--tools-dir", default=None, help="where kforge-tune is (default: $KFORGE_BUILD_DIR/bin)")
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    args = parser.parse_args(argv)
    ray_init = {"num_cpus": args.num_cpus} if args.num_cpus and not args.ray else None
    try:
        summary = tune_many(args.payloads, args.output, target=args.target, trials=args.trials,
                            time_budget=args.time_budget, measurers=args.measurers, address=args.ray,
                            resume=args.resume, policy=args.policy, seed=args.seed, batch=args.batch,
                            extra_args=extra, tools_dir=args.tools_dir, ray_init=ray_init)
    except (DistributedError, TuneError) as e:
        print(f"kforge-tune-many: error: {e}", file=sys.stderr)
        return 2
    bad = [r for r in summary["payloads"] if r["state"] != "done"]
    for r in bad:
        print(f"kforge-tune-many: error: {r['name']} ({r['payload']}): {r['error'] or r['state']}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
