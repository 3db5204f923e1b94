//===- BFloat16Builtins.cpp - the compiler builtin bf16 narrowing needs ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// LLVM narrows float to bfloat16 with a call of `__truncsfbf2` where the CPU
// has no conversion instruction (x86 without AVX512-BF16, e.g. Ice Lake):
// the X86 backend promotes vectorized bf16 copies to float and back, even
// where the program's IR has no narrowing at all. compiler-rt and GCC 13's
// libgcc define it; Debian 12's GCC 12 does not, so a bf16 program built on
// such a CPU did not link. The definition here is the one every program
// links (round to nearest, ties to even, NaN kept quiet: dat::floatToBF16).
//
//===----------------------------------------------------------------------===//

#include "dat/Support/BFloat16.h"

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
/// The x86-64 psABI returns a bfloat16 in the low 16 bits of %xmm0, where a
/// float's low half goes: a float with those bits is that return value.
extern "C" float __truncsfbf2(float x) {
  uint32_t bits = dat::floatToBF16(x);
  float out;
  std::memcpy(&out, &bits, sizeof(out));
  return out;
}
#endif
