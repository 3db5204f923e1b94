"""dat.compile: a model (config, folder or live reference module) and its
weights -> a CompiledModel, through the datc compiler."""

import json
import os
import shutil
import subprocess
import tempfile
import weakref

import numpy as np

from . import _safetensors
from ._model import FORMAT, LIBRARY, META, CompiledModel
from ._runtime import DatError

# The reference classes whose signature dat knows from their kwargs (the
# rest take `inputs=`), and each module's main output.
LANGUAGE_MODELS = ("TransformerLM", "DualAttnTransformerLM")
VISION_MODELS = ("VisionTransformer", "VisionDualAttnTransformer")
_SYMBOL_RETRIEVERS = ("SymbolicAttention", "PositionalSymbolRetriever",
                      "PositionRelativeSymbolRetriever",
                      "RelationalSymbolicAttention")
KNOWN_MODULES = LANGUAGE_MODELS + VISION_MODELS + _SYMBOL_RETRIEVERS + (
    "Attention", "RelationalAttention", "DualAttention", "EncoderBlock",
    "DecoderBlock", "DualAttnEncoderBlock", "DualAttnDecoderBlock",
    "Seq2SeqTransformer", "Seq2SeqDualAttnTransformer",
    "MultiHeadDotProductAttention", "TreeAlgebraic", "MTAlgebraic",
    "AlgebraicCCT", "AlgebraicSeqCCT")


def find_datc(datc=None):
    """The compiler: `datc`, $DAT_DATC, the build or install folder this
    package sits in (<root>/python/dat -> <root>/bin/datc, or the checkout's
    build/bin), then PATH."""
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    for candidate in (datc, os.environ.get("DAT_DATC"),
                      os.path.join(root, "bin", "datc"),
                      os.path.join(root, "build", "bin", "datc"),
                      shutil.which("datc")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise DatError("datc not found: build dat (scripts/build.sh), put datc "
                   "on PATH or set DAT_DATC")


def _describe_module(module, name, kwargs):
    """(class name, constructor kwargs) of a live reference module."""
    if name is None:
        for cls in type(module).__mro__:
            if cls.__name__ in KNOWN_MODULES:
                name = cls.__name__
                break
            # A subclass with its own forward computes something else.
            if "forward" in cls.__dict__:
                raise DatError(
                    "%s defines its own forward: dat compiles the reference "
                    "classes (%s); pass module=NAME if it computes what one "
                    "of them does" % (cls.__name__, ", ".join(KNOWN_MODULES)))
        if name is None:
            raise DatError("%s is not a reference module dat compiles (%s)"
                           % (type(module).__name__,
                              ", ".join(KNOWN_MODULES)))
    if kwargs is None:
        # huggingface_hub's PyTorchModelHubMixin keeps the constructor's
        # kwargs.
        kwargs = getattr(module, "_hub_mixin_config", None)
    if kwargs is None:
        raise DatError("the constructor kwargs of this %s are unknown: pass "
                       "kwargs={...} (those it was built with)" % name)
    return name, dict(kwargs)


def _state_dict_tensors(module):
    """The module's state_dict for a safetensors file (bf16 as bits)."""
    import torch
    tensors = {}
    for key, t in module.state_dict().items():
        t = t.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            tensors[key] = ("BF16", list(t.shape),
                            t.view(torch.int16).numpy().tobytes())
        else:
            tensors[key] = t.numpy()
    return tensors


def _tensor_specs(inputs):
    """`inputs=`: name -> shape, {"shape", "dtype"} or an example array."""
    specs = {}
    for name, v in inputs.items():
        if isinstance(v, dict):
            specs[name] = dict(v)
        elif isinstance(v, (tuple, list)):
            # (a dynamic dimension by its name)
            specs[name] = {"shape": [d if isinstance(d, str) else int(d)
                                     for d in v]}
        else:
            a = v if hasattr(v, "shape") and hasattr(v, "dtype") \
                else np.asarray(v)
            integer = str(a.dtype).replace("torch.", "").startswith(
                ("int", "uint", "long"))
            specs[name] = {"shape": [int(d) for d in a.shape],
                           "dtype": "int64" if integer else "float32"}
    return specs


def _default_outputs(name):
    if name in LANGUAGE_MODELS + VISION_MODELS + ("TreeAlgebraic", "MTAlgebraic",
                                              "AlgebraicCCT", "AlgebraicSeqCCT") or \
            name.startswith("Seq2Seq"):
        return ["logits"]
    return ["symbols"] if name in _SYMBOL_RETRIEVERS else ["y"]


def compile(model, weights=None, *, module=None, kwargs=None, inputs=None,
            outputs=None, call=None, batch=None, seq_len=None,
            dynamic_dims=None, dynamic=False, random_weights=None,
            target="cpu",
            precision="fp32", gemm=None, cpu=None, pipeline=None,
            allow_nonfinite=False, datc=None, verbose=False):
    """Compiles `model` and returns a callable CompiledModel.

    model: a config dict or file (docs/config-format.md), a folder (a
      save_pretrained folder, config.json of constructor kwargs and
      model.safetensors, or a golden case's), or a live reference
      nn.Module (its class and constructor kwargs, its state_dict).
    weights: a safetensors file (a config's weights; a folder's default to
      its model.safetensors); or random_weights=SEED.
    module, kwargs: the reference class and constructor kwargs, where they
      cannot be read from `model`.
    inputs / outputs / call: the tensors (name -> shape, {"shape",
      "dtype"} or an example array) and forward's keyword arguments;
      language and vision models need none (idx [batch, seq_len or
      max_block_size]; image [batch, C, H, W]; output logits).
    dynamic_dims: name -> largest size of the dimensions that take any size
      at run time; a shape in `inputs` names them, e.g.
      inputs={"x": ["batch", "seq", 64]}, dynamic_dims={"batch": 8,
      "seq": 512} (docs/config-format.md lists the modules that take them).
    dynamic: language and vision models (given as a module or folder): any
      batch up to `batch` (default 1; more runs in parts) and, for a
      language model, length up to `seq_len` (default max_block_size), each
      call doing the work of its own sizes.
    target "cpu" | "cuda"; precision "fp32" | "bf16"; gemm "generated" |
      "library" (default: cuBLAS on the GPU, generated on the CPU); cpu: the CPU to compile for (default this host's);
      pipeline: other --dat-program-pipeline options, "K=V ...".
    """
    work = tempfile.mkdtemp(prefix="dat-")
    try:
        return _compile(work, model, weights, module, kwargs, inputs,
                        outputs, call, batch, seq_len, dynamic_dims, dynamic,
                        random_weights,
                        target, precision, gemm, cpu, pipeline,
                        allow_nonfinite, datc, verbose)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _compile(work, model, weights, module, kwargs, inputs, outputs, call,
             batch, seq_len, dynamic_dims, dynamic, random_weights, target,
             precision,
             gemm, cpu,
             pipeline, allow_nonfinite, datc, verbose):
    src = os.path.join(work, "src")
    os.makedirs(src)
    config = None  # a dict to write, or None: `source` is used as it is
    source = None
    folder_args = []
    if hasattr(model, "state_dict") and hasattr(model, "forward"):
        name, kw = _describe_module(model, module, kwargs)
        if weights is None and random_weights is None:
            weights = os.path.join(src, "model.safetensors")
            _safetensors.write(weights, _state_dict_tensors(model))
        if inputs is None and name in LANGUAGE_MODELS + VISION_MODELS:
            with open(os.path.join(src, "config.json"), "w") as f:
                json.dump(kw, f)
            source, module = src, name
        else:
            config = {"module": name, "kwargs": kw}
    elif isinstance(model, dict):
        config = dict(model)
        module = module or config.get("module")
    elif isinstance(model, (str, os.PathLike)):
        source = os.fspath(model)
        if not os.path.exists(source):
            raise DatError("%s: no such file or folder" % source)
    else:
        raise TypeError("model: a config dict or path, a save_pretrained "
                        "folder, or a reference nn.Module; got %s"
                        % type(model).__name__)

    if config is not None:
        if kwargs is not None:
            config["kwargs"] = dict(kwargs)
        if inputs is not None:
            config["inputs"] = _tensor_specs(inputs)
        if "inputs" not in config:
            raise DatError("%s: pass inputs={name: shape, ...} (the tensors "
                           "forward takes)" % config.get("module"))
        if call is not None:
            config["call"] = dict(call)
        if dynamic_dims is not None:
            config["dynamic_dims"] = {str(k): int(v)
                                      for k, v in dynamic_dims.items()}
        if outputs is not None or "outputs" not in config:
            names = outputs or _default_outputs(config.get("module", ""))
            config["outputs"] = {n: {} for n in names}
        source = os.path.join(src, "config.json")
        with open(source, "w") as f:
            json.dump(config, f)
    elif os.path.isdir(source):
        if module:
            folder_args += ["--module", module]
        if batch:
            folder_args += ["--batch", str(int(batch))]
        if seq_len:
            folder_args += ["--seq-len", str(int(seq_len))]
        if dynamic:
            folder_args += ["--dynamic"]
        if inputs is not None or outputs is not None or call is not None \
                or dynamic_dims is not None:
            raise DatError("inputs/outputs/call/dynamic_dims: a folder's "
                           "model is a "
                           "language or vision model with its own; pass a "
                           "config for others")
    if config is not None and dynamic:
        raise DatError("dynamic=True applies to language and vision models "
                       "given without inputs=; a config names its "
                       "dynamic_dims")
    if config is not None and (batch or seq_len):
        raise DatError("batch/seq_len apply to language and vision models "
                       "given without inputs=; give the shapes in inputs=")

    out = os.path.join(work, "model")
    os.makedirs(out)
    cmd = [find_datc(datc), "compile", source, "--emit", "library",
           "-o", os.path.join(out, LIBRARY), "--target", target,
           "--precision", precision] + folder_args
    if weights is not None:
        cmd += ["--weights", os.fspath(weights)]
    elif random_weights is not None:
        cmd += ["--random-weights", str(int(random_weights))]
    elif not os.path.isdir(source):
        raise DatError("no weights: pass weights=FILE.safetensors or "
                       "random_weights=SEED")
    if gemm:
        cmd += ["--gemm", gemm]
    if cpu:
        cmd += ["--cpu", cpu]
    if pipeline:
        cmd += ["--pipeline", pipeline]
    if verbose:
        print(" ".join(cmd))
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        message = r.stderr.strip().replace("datc: error: ", "")
        raise DatError(message or "datc failed (exit %d)" % r.returncode)
    name = (config or {}).get("module") or module
    if name is None:
        path = os.path.join(source, "config.json") \
            if os.path.isdir(source) else source
        try:
            with open(path) as f:
                name = json.load(f).get("module")
        except (OSError, ValueError, AttributeError):
            pass
    with open(os.path.join(out, META), "w") as f:
        json.dump({"format": FORMAT, "module": name, "target": target,
                   "precision": precision}, f)
    shutil.rmtree(src, ignore_errors=True)
    m = CompiledModel(out, allow_nonfinite=allow_nonfinite)
    m._finalizer = weakref.finalize(m, shutil.rmtree, work, True)
    return m
