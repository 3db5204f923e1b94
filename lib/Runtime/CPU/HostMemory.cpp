//===- HostMemory.cpp - CPU programs use the runtime's buffers directly ---===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "../Program/ProgramMemory.h"

#include <cstdlib>

namespace datrt {

const void *visibleToProgram(const void *host, size_t) { return host; }

void freeProgramBuffer(void *buffer) { std::free(buffer); }

} // namespace datrt
