//===- BFloat16.h - bfloat16 <-> float on the host --------------*- C++ -*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// bfloat16 is the top half of an IEEE float: widening is exact, narrowing
// rounds to nearest, ties to even (what the GPU's cvt.rn.bf16.f32 and
// PyTorch's .to(torch.bfloat16) do). Used where float32 data (weights,
// golden inputs) meets a bf16 program and where its bf16 outputs are read.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_SUPPORT_BFLOAT16_H
#define DAT_SUPPORT_BFLOAT16_H

#include "dat/Support/SafeTensors.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace dat {

inline uint16_t floatToBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // a quiet NaN
  uint32_t lsb = (bits >> 16) & 1;
  return static_cast<uint16_t>((bits + 0x7fffu + lsb) >> 16);
}

inline float bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// `n` float elements of `dtype` (F32 or BF16) at `data`, as floats; empty
/// for other dtypes.
inline std::vector<float> floatValues(DType dtype, const void *data,
                                      int64_t n) {
  std::vector<float> out;
  if (dtype == DType::F32) {
    out.resize(n);
    std::memcpy(out.data(), data, n * sizeof(float));
  } else if (dtype == DType::BF16) {
    out.resize(n);
    const uint8_t *bytes = static_cast<const uint8_t *>(data);
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, bytes + 2 * i, 2);
      out[i] = bf16ToFloat(h);
    }
  }
  return out;
}

} // namespace dat

#endif // DAT_SUPPORT_BFLOAT16_H
