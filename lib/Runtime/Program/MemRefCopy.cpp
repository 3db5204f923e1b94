//===- MemRefCopy.cpp - the memref copy the lowered code calls ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// MLIR lowers a memref.copy between non-contiguous (strided) buffers to a
// call of `memrefCopy`, which upstream provides in libmlir_c_runner_utils.
// That library drags in all of MLIR and LLVM, so programs get this
// self-contained version with the same C ABI instead.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// Layout of an unranked memref: rank, then a pointer to the ranked
/// descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
struct DescriptorHead {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1]; // sizes[rank], then strides[rank]
};
} // namespace

extern "C" void memrefCopy(int64_t elemSize, UnrankedMemRef *src,
                           UnrankedMemRef *dst) {
  int64_t rank = src->rank;
  auto *s = static_cast<DescriptorHead *>(src->descriptor);
  auto *d = static_cast<DescriptorHead *>(dst->descriptor);
  const int64_t *sizes = s->sizesAndStrides;
  const int64_t *srcStrides = s->sizesAndStrides + rank;
  const int64_t *dstStrides = d->sizesAndStrides + rank;
  char *srcBase = s->aligned + s->offset * elemSize;
  char *dstBase = d->aligned + d->offset * elemSize;
  if (rank == 0) {
    std::memcpy(dstBase, srcBase, elemSize);
    return;
  }
  for (int64_t r = 0; r < rank; ++r)
    if (sizes[r] == 0)
      return;
  // Walk every index; copy the innermost dimension in one go when both
  // sides are contiguous there.
  bool innerContiguous = srcStrides[rank - 1] == 1 && dstStrides[rank - 1] == 1;
  std::vector<int64_t> index(rank, 0);
  while (true) {
    int64_t so = 0, dO = 0;
    for (int64_t r = 0; r < rank - 1; ++r) {
      so += index[r] * srcStrides[r];
      dO += index[r] * dstStrides[r];
    }
    int64_t inner = sizes[rank - 1];
    if (innerContiguous) {
      std::memmove(dstBase + dO * elemSize, srcBase + so * elemSize,
                   inner * elemSize);
    } else {
      for (int64_t k = 0; k < inner; ++k)
        std::memmove(dstBase + (dO + k * dstStrides[rank - 1]) * elemSize,
                     srcBase + (so + k * srcStrides[rank - 1]) * elemSize,
                     elemSize);
    }
    int64_t r = rank - 2;
    for (; r >= 0; --r) {
      if (++index[r] < sizes[r])
        break;
      index[r] = 0;
    }
    if (r < 0)
      return;
  }
}
