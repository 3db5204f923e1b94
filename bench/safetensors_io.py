"""Minimal safetensors reading and writing for the benchmark scripts.

`read(path)` -> {name: (dtype, shape, bytes)}; `write(path, tensors)` takes
{name: (dtype, shape, bytes)}. Python's standard library only, so that the
build machine (no numpy, no torch) can write benchmark inputs.
"""
import json
import struct

SIZES = {"F32": 4, "F64": 8, "I64": 8, "BF16": 2, "F16": 2, "I32": 4}


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        out[name] = (info["dtype"], list(info["shape"]), raw[base + begin:base + end])
    return out


def write(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def from_torch(t):
    """A float or integer torch tensor as a (dtype, shape, bytes) entry."""
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return ("BF16", list(t.shape), t.view(torch.int16).numpy().tobytes())
    kind = {torch.float32: "F32", torch.float64: "F64", torch.int64: "I64",
            torch.int32: "I32"}[t.dtype]
    return (kind, list(t.shape), t.numpy().tobytes())


def to_torch(entry, device="cpu", dtype=None):
    """A (dtype, shape, bytes) entry as a torch tensor (floats cast to
    `dtype` when given)."""
    import torch
    kind, shape, data = entry
    if kind == "BF16":  # the bits, reinterpreted
        t = torch.frombuffer(bytearray(data), dtype=torch.int16)
        t = t.view(torch.bfloat16).reshape(shape)
    else:
        torch_dtype = {"F32": torch.float32, "F64": torch.float64,
                       "I64": torch.int64, "I32": torch.int32}[kind]
        t = torch.frombuffer(bytearray(data), dtype=torch_dtype).reshape(shape)
    if dtype is not None and t.is_floating_point():
        t = t.to(dtype)
    return t.to(device)
