"""A compiled program's shared library, through its C API
(include/dat/Runtime/dat_program.h), with numpy buffers."""

import ctypes
import json
import os

import numpy as np

from ._safetensors import numpy_dtype

API_VERSION = 2
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
        self.shape = tuple(spec["shape"])  # a dynamic dimension's maximum
        # Per dimension, the name of a dynamic one ("" static); () if none.
        self.dims = tuple(spec.get("dims", ()))
        self.range = tuple(spec["range"]) if "range" in spec else None
        self.np_dtype = numpy_dtype(self.dtype)

    def dim_text(self):
        """The shape with dynamic dimensions named: [batch<=4, seq<=128, 64]."""
        return "[%s]" % ", ".join(
            "%s<=%d" % (n, d) if n else str(d)
            for n, d in zip(self.dims or ("",) * len(self.shape), self.shape))

    def resolve(self, sizes):
        """The shape at the dynamic dimensions' `sizes` (by name)."""
        return tuple(sizes[n] if n else d for n, d in
                     zip(self.dims or ("",) * len(self.shape), self.shape))

    def __repr__(self):
        return "%s %s %s" % (self.name, self.dtype, self.dim_text())


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
        lib.dat_program_set_dims.argtypes = [
            ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
            ctypes.POINTER(ctypes.c_int64)]
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
        # Dynamic dimensions: name -> largest size.
        self.dim_maxima = {}
        for slot in self.args + self.results:
            for n, d in zip(slot.dims, slot.shape):
                if n:
                    self.dim_maxima[n] = d
        self._sizes = None  # the sizes the program was last set to

    def dim_sizes(self, arrays):
        """The dynamic dimensions' sizes the input `arrays` give (by name),
        checked: static dimensions as compiled, dynamic ones in [1, max]
        and equal wherever a name recurs."""
        sizes, seen = {}, {}
        for a, s in zip(arrays, self.inputs):
            ok = a.ndim == len(s.shape)
            for k in range(len(s.shape) if ok else 0):
                name = s.dims[k] if s.dims else ""
                if not name:
                    ok = ok and a.shape[k] == s.shape[k]
                    continue
                size = a.shape[k]
                ok = ok and 1 <= size <= s.shape[k]
                if name in sizes and sizes[name] != size:
                    raise DatError(
                        "input '%s' has %s = %d (dimension %d), but input "
                        "'%s' has %s = %d" % (s.name, name, size, k,
                                              seen[name], name, sizes[name]))
                sizes.setdefault(name, size)
                seen.setdefault(name, s.name)
            if not ok:
                raise DatError("input '%s' has shape %s; the model was "
                               "compiled for %s" % (s.name, list(a.shape),
                                                   s.dim_text()))
        return sizes

    def set_dims(self, sizes):
        if sizes == self._sizes:
            return
        names = list(sizes)
        c_names = (ctypes.c_char_p * max(1, len(names)))(
            *[n.encode() for n in names])
        c_sizes = (ctypes.c_int64 * max(1, len(names)))(
            *[sizes[n] for n in names])
        if self.library.lib.dat_program_set_dims(
                self.handle, len(names), c_names, c_sizes) != 0:
            raise DatError(self.library.error())
        self._sizes = dict(sizes)

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:
            self.library.lib.dat_program_destroy(handle)
            self.handle = None

    def run(self, arrays):
        """`arrays`: one C-contiguous array per input, in order, of the
        slot's dtype and shape (checked; dynamic dimensions at any size up
        to theirs). Returns the results, new arrays."""
        sizes = {}
        if self.dim_maxima:
            sizes = self.dim_sizes(arrays)
            self.set_dims(sizes)
        for a, s in zip(arrays, self.inputs):
            if a.dtype != s.np_dtype or a.shape != s.resolve(sizes) or \
                    not a.flags.c_contiguous:
                raise DatError("internal error: input '%s' is %s %s"
                               % (s.name, a.dtype, a.shape))
        outs = [np.empty(s.resolve(sizes), dtype=s.np_dtype)
                for s in self.results]
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
