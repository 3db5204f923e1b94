# -*- Python -*-
# lit configuration of the dat test suite.

import os
import shutil

import lit.formats
import lit.util
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

# Running lit on the source folder: load the build's site config instead.
if not hasattr(config, "dat_obj_root"):
    build = os.environ.get("DAT_BUILD_DIR",
                           os.path.join(os.path.dirname(__file__), "..", "build"))
    site = os.path.join(build, "test", "lit.site.cfg.py")
    if not os.path.exists(site):
        lit_config.fatal("no lit.site.cfg.py in %s: build first or set DAT_BUILD_DIR" % build)
    lit_config.load_config(config, site)
    raise SystemExit

config.name = "DAT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py",
                   "lit.site.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.dat_obj_root, "test")

# FileCheck, not, count... live in /usr/lib/llvm-22/bin, off PATH on Debian.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.dat_tools_dir, append_path=True)
llvm_config.use_default_substitutions()
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

# A sanitized build (scripts/test.sh --sanitize): hosts that load a
# program's instrumented shared library (Python, the C API test's program)
# need the ASan runtime first, preloaded or linked (%sanitize_flags).
_preload = ""
_sanitize = getattr(config, "dat_sanitize", "")
config.substitutions.append(
    ("%sanitize_flags", "-fsanitize=" + _sanitize if _sanitize else ""))
if "address" in _sanitize:
    import subprocess
    # libstdc++ too: the library throws C++ exceptions, and ASan's __cxa_throw
    # interceptor needs the real one loaded when it starts.
    _libs = [subprocess.run(["c++", "-print-file-name=" + lib],
                            capture_output=True, text=True).stdout.strip()
             for lib in ("libasan.so", "libstdc++.so")]
    if all(os.path.isabs(lib) for lib in _libs):
        _preload = "env LD_PRELOAD=" + ":".join(_libs) + " "


def _python_command(python):
    return _preload + python


config.substitutions.append(("%PYTHON",
                             _python_command(config.python_executable)))
config.substitutions.append(("%dat_src_root", config.dat_src_root))
config.substitutions.append(("%dat_obj_root", config.dat_obj_root))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
config.substitutions.append(
    ("%mlir_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_runner_utils.so")))
config.substitutions.append(
    ("%mlir_c_runner_utils",
     os.path.join(config.mlir_lib_dir, "libmlir_c_runner_utils.so")))

tools = [
    "dat-opt",
    "datc",
    ToolSubst("mlir-runner", unresolved="fatal"),
    ToolSubst("mlir-translate", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.dat_tools_dir, config.llvm_tools_dir])

# The golden cases live outside the repository; without them the
# conformance tests are UNSUPPORTED (and say so), never vacuously green.
if os.path.isdir(config.golden_dir):
    config.available_features.add("golden")
    config.substitutions.append(("%golden", config.golden_dir))
else:
    lit_config.note("no golden cases at %s: conformance tests are UNSUPPORTED"
                    % config.golden_dir)

# GPU features: `cuda-toolkit` when ptxas is there (PTX/cubin can be built
# and validated), `cuda-driver` when a CUDA driver is loadable (GPU execution
# tests). Tests that need them say `REQUIRES:` and are UNSUPPORTED otherwise.
ptxas = os.path.join(config.cuda_toolkit_dir, "bin", "ptxas")
if os.path.exists(ptxas):
    config.available_features.add("cuda-toolkit")
    config.substitutions.append(("%cuda_toolkit", config.cuda_toolkit_dir))
    config.substitutions.append(("%ptxas", ptxas))


def _has_cuda_driver():
    import ctypes
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    count = ctypes.c_int(0)
    return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 \
        and count.value > 0


if _has_cuda_driver():
    config.available_features.add("cuda-driver")
else:
    lit_config.note("no CUDA driver/GPU: GPU execution tests are UNSUPPORTED")

# `torch`: a Python with PyTorch (Debian's python3-torch lives under
# /usr/bin/python3, which may not be the first python3 on PATH) for the
# benchmark baselines' checks; %torch_python runs it. `jax`: the same for
# JAX and numpy (DAT_JAX_PYTHON names one, e.g. a virtual environment's),
# %jax_python; `flex`: PyTorch with FlexAttention (>= 2.5; DAT_FLEX_PYTHON),
# %flex_python.
def _python_feature(feature, module, env, missing):
    """Adds `feature` and %<feature>_python for the first Python ($env, then
    python3 on PATH, then /usr/bin/python3) that imports `module`."""
    import shutil
    import subprocess
    for candidate in (os.environ.get(env) if env else None,
                      shutil.which("python3"), "/usr/bin/python3"):
        if candidate and subprocess.run(
                [candidate, "-c", "import " + module], capture_output=True).returncode == 0:
            config.available_features.add(feature)
            config.substitutions.append(("%" + feature + "_python",
                                         _python_command(candidate)))
            return
    lit_config.note(missing)


_python_feature("jax", "jax, numpy", "DAT_JAX_PYTHON",
                "no JAX: the JAX baseline's check is UNSUPPORTED "
                "(DAT_JAX_PYTHON=python-with-jax enables it)")
_python_feature("flex", "torch.nn.attention.flex_attention", "DAT_FLEX_PYTHON",
                "no PyTorch >= 2.5: the FlexAttention baseline's check is "
                "UNSUPPORTED (DAT_FLEX_PYTHON=python-with-torch enables it)")
_python_feature("torch", "torch", None,
                "no PyTorch: the benchmark baselines' checks are UNSUPPORTED")

# The Python package (python/dat): `numpy` for its numpy-only tests
# (%numpy_python); `dat-reference` for the tests against the real reference
# modules, a Python with torch and dual-attention 0.0.7 (DAT_REFERENCE_PYTHON,
# else the venv scripts/reference-venv.sh makes (scripts/test.sh runs it),
# else the benchmark venv; %reference_python).
config.substitutions.append(("%dat_python_path",
                             os.path.join(config.dat_src_root, "python")))
config.substitutions.append(("%dat_tools", config.dat_tools_dir))
_python_feature("numpy", "numpy", None,
                "no numpy: the Python package's tests are UNSUPPORTED")


def _reference_python():
    import subprocess
    venvs = [os.path.join(config.dat_obj_root, v, "bin", "python")
             for v in ("reference-venv", "bench-venv")]
    for candidate in [os.environ.get("DAT_REFERENCE_PYTHON")] + venvs:
        if candidate and os.path.exists(candidate) and subprocess.run(
                [candidate, "-c",
                 "import torch, dual_attention, huggingface_hub, jinja2"],
                capture_output=True).returncode == 0:
            config.available_features.add("dat-reference")
            config.substitutions.append(("%reference_python",
                                         _python_command(candidate)))
            return
    lit_config.note("no Python with torch and dual-attention 0.0.7: the "
                    "package's tests against the reference are UNSUPPORTED "
                    "(scripts/reference-venv.sh makes one, or "
                    "DAT_REFERENCE_PYTHON=python-with-them)")


_reference_python()
