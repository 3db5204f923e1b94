"""numpy arrays and torch tensors in and out of a program (torch optional:
imported only when a tensor is one)."""

import numpy as np

from ._safetensors import bf16_bits, bf16_to_float32


def is_torch(x):
    return type(x).__module__.split(".")[0] == "torch"


def to_numpy(x):
    """(array, device) for a numpy array, a torch tensor (any device: a CUDA
    tensor is copied to the host) or anything np.asarray takes. A torch
    bfloat16 tensor comes back as ("bf16", uint16 bits)."""
    if is_torch(x):
        import torch
        device = x.device
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        if t.dtype == torch.bfloat16:
            return ("bf16", t.contiguous().view(torch.int16).numpy().view(
                np.uint16)), device
        return t.numpy(), device
    return np.asarray(x), None


def for_slot(value, slot, what):
    """`value` (from to_numpy) as the slot's dtype, C-contiguous; no copy
    where it already is one."""
    if isinstance(value, tuple):  # torch bfloat16 bits
        bits = value[1]
        if slot.dtype == "BF16":
            return np.ascontiguousarray(bits)
        value = bf16_to_float32(bits)
    a = value
    if slot.dtype == "I64":
        if a.dtype.kind not in "iub":
            raise TypeError("%s: expected integers (token or node ids), got "
                            "%s" % (what, a.dtype))
        return np.ascontiguousarray(a, dtype=np.int64)
    if a.dtype.kind not in "fiub":
        raise TypeError("%s: expected numbers, got %s" % (what, a.dtype))
    if slot.dtype == "BF16":
        return bf16_bits(a)
    return np.ascontiguousarray(a, dtype=np.float32)


def from_numpy(a, slot, like):
    """A result for the caller: a torch tensor (on `like`'s device) when the
    inputs were torch tensors, else numpy. BF16 results: torch bfloat16, or
    float32 numpy (numpy has no bfloat16)."""
    if like is None:
        return bf16_to_float32(a) if slot.dtype == "BF16" else a
    import torch
    t = torch.from_numpy(a.view(np.int16) if slot.dtype == "BF16" else a)
    if slot.dtype == "BF16":
        t = t.view(torch.bfloat16)
    return t.to(like) if like.type != "cpu" else t
