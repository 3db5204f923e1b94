"""Reading and writing safetensors files with numpy only.

The format: an 8-byte little-endian header length, a JSON header naming each
tensor's dtype, shape and byte range, then the data. bfloat16 has no numpy
type: it travels as uint16 bits (see `bf16_bits` / `bf16_to_float32`).
"""

import json
import struct

import numpy as np

_NUMPY = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U8": np.uint8, "BOOL": np.bool_, "BF16": np.uint16,
}
_NAMES = {np.dtype(v): k for k, v in _NUMPY.items() if k != "BF16"}


def numpy_dtype(name):
    """The numpy dtype that holds a safetensors dtype (BF16: uint16 bits)."""
    return np.dtype(_NUMPY[name])


def bf16_bits(values):
    """float32 values rounded to bfloat16 (to nearest, ties to even), as
    uint16 bits."""
    bits = np.ascontiguousarray(values, dtype=np.float32).view(np.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    # NaN stays NaN (rounding could carry it into infinity).
    rounded = np.where(np.isnan(values), bits | 0x00400000, rounded)
    return (rounded >> 16).astype(np.uint16)


def bf16_to_float32(bits):
    """bfloat16 bits (uint16) as float32 values."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(
        np.float32)


def write(path, tensors, metadata=None):
    """Writes `tensors`: name -> numpy array, or name -> (dtype name, shape,
    bytes) for dtypes numpy lacks (BF16)."""
    header, chunks, offset = {}, [], 0

    def element_size(name):
        t = tensors[name]
        return numpy_dtype(t[0]).itemsize if isinstance(t, tuple) \
            else np.asarray(t).dtype.itemsize

    # Widest elements first (then by name): every tensor starts aligned to
    # its element size, as safetensors' own writer orders them.
    for name in sorted(tensors, key=lambda n: (-element_size(n), n)):
        t = tensors[name]
        if isinstance(t, tuple):
            dtype, shape, data = t
            data = bytes(data)
        else:
            a = np.ascontiguousarray(t)
            if a.dtype not in _NAMES:
                raise TypeError("tensor '%s': dtype %s cannot be stored"
                                % (name, a.dtype))
            dtype, shape, data = _NAMES[a.dtype], list(a.shape), a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # aligned data
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def read(path):
    """name -> numpy array (BF16 as uint16 bits) and the metadata."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError("%s: not a safetensors file (too short)" % path)
    (n,) = struct.unpack("<Q", blob[:8])
    if n > len(blob) - 8:
        raise ValueError("%s: not a safetensors file (bad header length)"
                         % path)
    header = json.loads(blob[8:8 + n])
    metadata = header.pop("__metadata__", {}) or {}
    out = {}
    for name, spec in header.items():
        begin, end = spec["data_offsets"]
        out[name] = np.frombuffer(
            blob, dtype=numpy_dtype(spec["dtype"]), count=(end - begin)
            // numpy_dtype(spec["dtype"]).itemsize,
            offset=8 + n + begin).reshape(spec["shape"])
    return out, metadata
