# lit configuration for kforge (loaded by the generated lit.site.cfg.py; not named lit.cfg.py so that
# discovery from the source root does not take test/ for a suite of its own). The suite covers test/ plus the recipe and example
# files themselves, each of which carries a parse-only RUN line.
import os
import shutil

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "kforge"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]

config.test_source_root = config.kforge_src_root
config.test_exec_root = os.path.join(config.kforge_obj_root, "test")
# Discover tests only in these top-level folders of the source tree.
_test_dirs = {"test", "recipes", "examples"}
config.excludes = [entry for entry in os.listdir(config.kforge_src_root) if entry not in _test_dirs]
config.excludes += ["kforge-lit-config.py", "lit.site.cfg.py.in", "CMakeLists.txt", "Inputs"]

config.environment["FILECHECK_OPTS"] = "-enable-var-scope --allow-unused-prefixes=false"

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%kforge_src_root", config.kforge_src_root))
config.substitutions.append(("%kforge_obj_root", config.kforge_obj_root))
config.substitutions.append(("%recipes", os.path.join(config.kforge_src_root, "recipes")))
config.substitutions.append(("%examples", os.path.join(config.kforge_src_root, "examples")))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "CUDA_HOME", "CUDA_PATH"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.kforge_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

tool_dirs = [config.kforge_tools_dir, config.llvm_tools_dir]
tools = [
    "kforge-opt",
    "kforge-compile",
    "kforge-run",
    "kforge-tune",
    ToolSubst("mlir-translate", unresolved="fatal"),
    ToolSubst("mlir-runner", unresolved="ignore"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
config.substitutions.append(("%mlir_lib_dir", config.llvm_lib_dir))
config.substitutions.append(("%kforge_runtime", os.path.join(config.kforge_obj_root, "lib", "libkforge_mgpu.so")))

# ptxas (CUDA toolkit) lets tests assert that generated PTX assembles for sm_90.
_cuda_dirs = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + ["/usr/local/cuda"]
_ptxas = shutil.which("ptxas")
for _cuda in _cuda_dirs:
    if not _ptxas and _cuda and os.path.exists(os.path.join(_cuda, "bin", "ptxas")):
        _ptxas = os.path.join(_cuda, "bin", "ptxas")
if _ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", _ptxas))
else:
    lit_config.note("ptxas not found: PTX-acceptance tests are skipped")

# The Python package's tests need NumPy and pytest, which scripts/test.sh installs into <build>/venv.
_venv_python = os.path.join(config.kforge_obj_root, "venv", "bin", "python")
if os.path.exists(_venv_python):
    import subprocess
    if subprocess.run([_venv_python, "-c", "import numpy, pytest"], capture_output=True).returncode == 0:
        config.available_features.add("pytest")
        config.substitutions.append(("%venv_python", _venv_python))
if "pytest" not in config.available_features:
    lit_config.note("no <build>/venv with numpy and pytest: the Python package's tests are skipped")
# The PyTorch importer's tests also need torch and torch-mlir (scripts/install-python-deps.sh); found without
# importing them (importing torch takes seconds).
elif subprocess.run([_venv_python, "-c", "import importlib.util as u, sys; "
                     "sys.exit(not (u.find_spec('torch') and u.find_spec('torch_mlir')))"]).returncode == 0:
    config.available_features.add("torch-mlir")
else:
    lit_config.note("no torch and torch-mlir in <build>/venv: the PyTorch importer's tests are skipped")

# kforge.distributed's tests also need Ray (python/requirements-distributed.txt, scripts/install-python-deps.sh).
if "pytest" in config.available_features:
    if subprocess.run([_venv_python, "-c", "import importlib.util as u, sys; sys.exit(not u.find_spec('ray'))"]
                      ).returncode == 0:
        config.available_features.add("ray")
    else:
        lit_config.note("no Ray in <build>/venv: kforge.distributed's tests are skipped")

# A GPU is present when the driver library loads and reports at least one device.
def _has_cuda_gpu():
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0

if _has_cuda_gpu():
    config.available_features.add("cuda-gpu")

# The local language model (scripts/llm-local.sh: weights fetched and checked, llama-cpp-python built into
# <build>/llm-venv) lets test/Tune/llm-local.test run kforge-tune against it. Neither is part of the set-up
# (CI never has them); the check reads the script's stamp, so it costs no hashing once the model is checked.
import subprocess
_llm_python = os.path.join(config.kforge_obj_root, "llm-venv", "bin", "python")
_llm_script = os.path.join(config.kforge_src_root, "scripts", "llm-local.sh")
if (os.path.exists(_llm_python) and
        subprocess.run([_llm_python, "-c", "import importlib.util as u, sys; sys.exit(not u.find_spec('llama_cpp'))"],
                       capture_output=True).returncode == 0 and
        subprocess.run(["bash", _llm_script, "model"], capture_output=True,
                       env=dict(os.environ, KFORGE_BUILD_DIR=config.kforge_obj_root)).returncode == 0):
    config.available_features.add("llm-local")
else:
    lit_config.note("no local language model (scripts/llm-local.sh fetch && scripts/llm-local.sh build): "
                    "test/Tune/llm-local.test is skipped")
