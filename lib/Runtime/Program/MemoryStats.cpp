//===- MemoryStats.cpp - what a program's model allocates -----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "MemoryStats.h"

namespace datrt {

MemoryStats &memoryStats() {
  static MemoryStats stats;
  return stats;
}

} // namespace datrt
