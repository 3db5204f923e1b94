"""A compiled model: call it on numpy arrays or torch tensors, decode with
its KV cache, save it and load it again without the compiler."""

import json
import os
import shutil

import numpy as np

from . import _tensors
from ._runtime import DatError, Library, Program

LIBRARY = "model.so"
META = "dat-model.json"
FORMAT = 1


class CompiledModel:
    """A program compiled by `dat.compile` (or loaded by `dat.load`).

    `m(name=tensor, ...)` runs the forward pass: the inputs by the config's
    names (a single input may be positional); numpy arrays or torch tensors.
    Returns the output (or, for several, a dict by name) of the same kind.
    The batch may be any size (runs of the compiled batch, padded); a
    language model also takes any sequence length up to the compiled one
    (causal: padding after the last token changes nothing before it).
    """

    def __init__(self, directory, allow_nonfinite=False):
        self.directory = os.path.abspath(directory)
        meta_path = os.path.join(self.directory, META)
        try:
            with open(meta_path) as f:
                self.meta = json.load(f)
        except (OSError, ValueError) as e:
            raise DatError("%s: not a saved dat model (%s)"
                           % (directory, e)) from None
        if self.meta.get("format") != FORMAT:
            raise DatError("%s: saved model format %r, this package reads %d"
                           % (meta_path, self.meta.get("format"), FORMAT))
        self._library = Library(os.path.join(self.directory, LIBRARY))
        self._program = Program(self._library, None, allow_nonfinite)
        p = self._program
        # Batch: every input and output has it first, or none may vary.
        b = p.inputs[0].shape[0] if p.inputs and p.inputs[0].shape else None
        self._batch = b if b and all(
            s.shape and s.shape[0] == b for s in p.inputs + p.results) \
            else None
        # Sequence length (dimension 1): only where the model is causal.
        self._causal = p.has_step
        self._seq = p.inputs[0].shape[1] if self._causal else None
        # Dynamic dimensions (dynamic_dims): the program takes the sizes it
        # is given; a batch beyond its maximum runs in parts.
        self._dynamic = bool(p.dim_maxima)
        first = {(s.dims[0] if s.dims else "") for s in p.inputs + p.results}
        self._dynamic_batch = first.pop() if len(first) == 1 else ""
        self._finalizer = None

    # What the program reads and writes.
    @property
    def inputs(self):
        """name -> (shape, dtype) of each input, as compiled."""
        return {s.name: (s.shape, s.dtype) for s in self._program.inputs}

    @property
    def outputs(self):
        return {s.name: (s.shape, s.dtype) for s in self._program.results}

    @property
    def dynamic_dims(self):
        """name -> largest size of each dynamic dimension (a config's
        dynamic_dims; empty for a program of fixed shapes)."""
        return dict(self._program.dim_maxima)

    @property
    def module(self):
        return self.meta.get("module")

    def __repr__(self):
        return "<dat.CompiledModel %s (%s, %s): %s -> %s>" % (
            self.module, self.meta.get("target"), self.meta.get("precision"),
            ", ".join(map(repr, self._program.inputs)),
            ", ".join(map(repr, self._program.results)))

    def _shape_error(self, slot, shape):
        allowed = []
        if self._batch:
            allowed.append("any batch")
        if self._causal:
            allowed.append("a sequence up to %d" % self._seq)
        return DatError(
            "input '%s' has shape %s; the model was compiled for %s%s" % (
                slot.name, list(shape), list(slot.shape),
                " (%s)" % " and ".join(allowed) if allowed else
                " (recompile for other shapes)"))

    def __call__(self, *args, **kwargs):
        p = self._program
        names = [s.name for s in p.inputs]
        if args:
            if len(args) > 1 or len(names) != 1 or kwargs:
                raise TypeError("pass the inputs by name: %s"
                                % ", ".join(names))
            kwargs = {names[0]: args[0]}
        unknown = sorted(set(kwargs) - set(names))
        missing = [n for n in names if n not in kwargs]
        if unknown or missing:
            raise TypeError("%s%s (the model reads %s)" % (
                "unknown input(s) %s" % ", ".join(unknown) if unknown else "",
                ("; " if unknown else "") + "missing input(s) %s"
                % ", ".join(missing) if missing else "", ", ".join(names)))
        arrays, like = [], None
        for s in p.inputs:
            value, device = _tensors.to_numpy(kwargs[s.name])
            like = like or device
            arrays.append(_tensors.for_slot(value, s, "input '%s'" % s.name))
        if self._dynamic:
            results = self._run_dynamic(arrays)
            outs = {s.name: _tensors.from_numpy(r, s, like)
                    for r, s in zip(results, p.results)}
            return next(iter(outs.values())) if len(outs) == 1 else outs
        # The actual batch and sequence length, checked against the slots.
        batch = arrays[0].shape[0] if self._batch and arrays[0].ndim else None
        seq = arrays[0].shape[1] if self._causal else None
        for a, s in zip(arrays, p.inputs):
            want = list(s.shape)
            if batch is not None:
                want[0] = batch
            if seq is not None and len(want) > 1:
                want[1] = seq
            if list(a.shape) != want or (seq is not None and
                                         not 1 <= seq <= self._seq) \
                    or (batch is not None and batch < 1):
                raise self._shape_error(s, a.shape)
        results = self._run(arrays, batch, seq)
        outs = {s.name: _tensors.from_numpy(r, s, like)
                for r, s in zip(results, p.results)}
        return next(iter(outs.values())) if len(outs) == 1 else outs

    def _run_dynamic(self, arrays):
        """A program of dynamic dimensions runs the arrays as they are; a
        dynamic batch (dimension 0 of every tensor) beyond its maximum runs
        in parts of the maximum."""
        p = self._program
        name = self._dynamic_batch
        if not name or not arrays or arrays[0].ndim == 0 or \
                arrays[0].shape[0] <= p.dim_maxima[name]:
            return p.run(arrays)
        B, batch = p.dim_maxima[name], arrays[0].shape[0]
        if any(a.ndim == 0 or a.shape[0] != batch for a in arrays):
            return p.run(arrays)  # the error names the input at fault
        chunks = [p.run([np.ascontiguousarray(a[start:start + B])
                         for a in arrays])
                  for start in range(0, batch, B)]
        return [np.ascontiguousarray(np.concatenate(parts))
                for parts in zip(*chunks)]

    def _run(self, arrays, batch, seq):
        p = self._program
        if batch is None:
            return p.run(arrays)
        B = self._batch
        chunks = []
        for start in range(0, batch, B):
            n = min(B, batch - start)
            padded = []
            for a, s in zip(arrays, p.inputs):
                part = a[start:start + n]
                if n == B and (seq is None or seq == s.shape[1]):
                    padded.append(np.ascontiguousarray(part))
                    continue
                fill = s.range[0] if s.range else 0
                full = np.full(s.shape, fill, dtype=s.np_dtype)
                index = (slice(0, n),) + ((slice(0, seq),) if seq else ())
                full[index] = part
                padded.append(full)
            outs = p.run(padded)
            chunks.append([o[:n, :seq] if seq is not None and o.ndim > 1
                           else o[:n] for o in outs])
        return [np.ascontiguousarray(np.concatenate(parts)) if len(chunks) > 1
                else np.ascontiguousarray(parts[0])
                for parts in zip(*chunks)]

    # Decoding (language models).
    def _need_step(self):
        if not self._program.has_step:
            raise DatError("%s has no decode step (language models have one, "
                           "except with rel_activation='softmax')"
                           % self.module)

    @property
    def position(self):
        """The next position `step` fills."""
        self._need_step()
        return self._program.position()

    def reset(self):
        """Empties the KV cache: the next `step` is at position 0."""
        self._need_step()
        self._program.reset()

    def step(self, tokens):
        """Runs one token per batch row (int64 [B], B up to the compiled
        batch) at the next position; returns the logits [B, vocab]."""
        self._need_step()
        p = self._program
        value, like = _tensors.to_numpy(tokens)
        ids = np.asarray(value, dtype=np.int64).reshape(-1)
        idx = [s for s in p.step_args if s.name == "idx"][0]
        logits = p.step_results[0]
        B = idx.shape[0]
        if not 1 <= ids.size <= B:
            raise DatError("step: %d tokens; the model decodes 1 to %d rows"
                           % (ids.size, B))
        lo = idx.range[0] if idx.range else 0
        full = np.full(B, lo, dtype=np.int64)
        full[:ids.size] = ids
        out = np.empty((B, logits.shape[2]), dtype=logits.np_dtype)
        p.step(full, out)
        return _tensors.from_numpy(np.ascontiguousarray(out[:ids.size]),
                                   logits, like)

    def generate(self, prompt, max_new_tokens):
        """Greedy decoding with the KV cache: `prompt` int64 [B, T0] (any
        B); returns [B, T0 + max_new_tokens], the prompt then the tokens,
        like the reference's generate with top_k=1."""
        self._need_step()
        value, like = _tensors.to_numpy(prompt)
        ids = np.asarray(value)
        if ids.ndim != 2 or ids.shape[1] < 1 or ids.dtype.kind not in "iu":
            raise DatError("generate: the prompt must be integer token ids "
                           "[batch, length >= 1], got %s %s"
                           % (ids.dtype, list(ids.shape)))
        if max_new_tokens < 1:
            raise DatError("generate: max_new_tokens must be at least 1")
        ids = ids.astype(np.int64)
        p = self._program
        B = [s for s in p.step_args if s.name == "idx"][0].shape[0]
        total = ids.shape[1] + max_new_tokens
        limit = [s for s in p.step_args if s.name == "position"][0].range[1]
        if total - 1 > limit + 1:
            raise DatError("generate: the prompt (%d) and %d new tokens need "
                           "%d positions; max_block_size is %d"
                           % (ids.shape[1], max_new_tokens, total - 1,
                              limit + 1))
        rows = []
        for start in range(0, ids.shape[0], B):
            seq = ids[start:start + B]
            out = np.zeros((seq.shape[0], total), dtype=np.int64)
            out[:, :seq.shape[1]] = seq
            self._program.reset()
            for t in range(total - 1):
                logits = self.step(out[:, t])  # numpy in, numpy out
                if t >= seq.shape[1] - 1:
                    out[:, t + 1] = np.argmax(logits, axis=-1)
            rows.append(out)
        result = np.concatenate(rows)
        if like is not None:
            import torch
            return torch.from_numpy(result).to(like)
        return result

    def save(self, path):
        """Writes the compiled model to the folder `path` (created); load it
        with `dat.load(path)`, no compiler needed."""
        if os.path.exists(path):
            raise DatError("%s: exists; save into a new folder" % path)
        shutil.copytree(self.directory, path)


def load(path, allow_nonfinite=False):
    """A model saved with `CompiledModel.save`."""
    return CompiledModel(path, allow_nonfinite=allow_nonfinite)
