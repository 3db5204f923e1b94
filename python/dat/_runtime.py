"""A compiled program's shared library, through its C API
(include/dat/Runtime/dat_program.h), with numpy buffers."""

import ctypes
import json
import os

import numpy as np

from ._safetensors import numpy_dtype

API_VERSION = 1
ALLOW_NONFINITE = 1


class DatError(RuntimeError):
    """A compile or run error reported by dat (the message names the tensor,
    file or key at fault)."""


class Slot:
    """One argument or result of a compiled function (from the manifest)."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.kind = spec.get("kind", "output")
        self.dtype = spec["dtype"]  # safetensors name: F32, BF16, I64
        self.shape = tuple(spec["shape"])
        self.range = tuple(spec["range"]) if "range" in spec else None
        self.np_dtype = numpy_dtype(self.dtype)

    def __repr__(self):
        return "%s %s %s" % (self.name, self.dtype, list(self.shape))


class Library:
    """A loaded program library; `create` gives a Program over its weights."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        try:
            # RTLD_LOCAL: each model's runtime stays its own.
            self.lib = ctypes.CDLL(self.path, mode=os.RTLD_LOCAL)
        except OSError as e:
            raise DatError("%s: cannot load the program library: %s"
                           % (path, e)) from None
        lib = self.lib
        try:
            lib.dat_program_api_version.restype = ctypes.c_int
        except AttributeError:
            raise DatError("%s: not a dat program library (compile it with "
                           "datc --emit library)" % path) from None
        version = lib.dat_program_api_version()
        if version != API_VERSION:
            raise DatError("%s: program API version %d, this package speaks "
                           "%d: recompile the model" % (path, version,
                                                         API_VERSION))
        lib.dat_program_manifest.restype = ctypes.c_char_p
        lib.dat_program_create.restype = ctypes.c_void_p
        lib.dat_program_create.argtypes = [ctypes.c_char_p, ctypes.c_uint]
        lib.dat_program_last_error.restype = ctypes.c_char_p
        lib.dat_program_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_void_p]
        lib.dat_program_has_step.argtypes = [ctypes.c_void_p]
        lib.dat_program_step.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_void_p]
        lib.dat_program_position.restype = ctypes.c_int64
        lib.dat_program_position.argtypes = [ctypes.c_void_p]
        lib.dat_program_reset.argtypes = [ctypes.c_void_p]
        lib.dat_program_destroy.argtypes = [ctypes.c_void_p]
        self.manifest = json.loads(lib.dat_program_manifest().decode())

    def error(self):
        return self.lib.dat_program_last_error().decode()


class Program:
    """A program with its weights loaded: `run` and, for language models,
    `step` on numpy arrays of exactly the manifest's dtypes and shapes."""

    def __init__(self, library, weights_path=None, allow_nonfinite=False):
        self.library = library
        lib = library.lib
        self.handle = lib.dat_program_create(
            None if weights_path is None else os.fsencode(weights_path),
            ALLOW_NONFINITE if allow_nonfinite else 0)
        if not self.handle:
            raise DatError(library.error())
        m = library.manifest
        self.args = [Slot(s) for s in m["args"]]
        self.inputs = [s for s in self.args if s.kind == "input"]
        self.results = [Slot(s) for s in m["results"]]
        self.step_args = [Slot(s) for s in m["step"]["args"]] \
            if "step" in m else []
        self.step_results = [Slot(s) for s in m["step"]["results"]] \
            if "step" in m else []
        self.has_step = bool(lib.dat_program_has_step(self.handle))

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self.library.lib.dat_program_destroy(handle)
            self.handle = None

    def run(self, arrays):
        """`arrays`: one C-contiguous array per input, in order, of the
        slot's dtype and shape (checked). Returns the results, new arrays."""
        for a, s in zip(arrays, self.inputs):
            if a.dtype != s.np_dtype or a.shape != s.shape or \
                    not a.flags.c_contiguous:
                raise DatError("internal error: input '%s' is %s %s"
                               % (s.name, a.dtype, a.shape))
        outs = [np.empty(s.shape, dtype=s.np_dtype) for s in self.results]
        ins = (ctypes.c_void_p * max(1, len(arrays)))(
            *[a.ctypes.data for a in arrays])
        res = (ctypes.c_void_p * max(1, len(outs)))(
            *[o.ctypes.data for o in outs])
        if self.library.lib.dat_program_run(self.handle, ins, res) != 0:
            raise DatError(self.library.error())
        return outs

    def step(self, tokens, logits):
        """One decode step: `tokens` int64 [B], `logits` [B, vocab] filled."""
        if self.library.lib.dat_program_step(
                self.handle, tokens.ctypes.data, logits.ctypes.data) != 0:
            raise DatError(self.library.error())

    def position(self):
        return self.library.lib.dat_program_position(self.handle)

    def reset(self):
        self.library.lib.dat_program_reset(self.handle)
