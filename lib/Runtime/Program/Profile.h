//===- Profile.h - prog --profile --------------------------------*- C++
//-*-===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// The times of one call, per op group (CPU: the dat-profile-points regions)
// or per kernel (GPU: events around each launch and cuBLAS GEMM). Each
// runtime implements these; ProgramMain prints them sorted.
//
//===----------------------------------------------------------------------===//

#ifndef DAT_RUNTIME_PROGRAM_PROFILE_H
#define DAT_RUNTIME_PROGRAM_PROFILE_H

#include <cstdint>
#include <string>
#include <vector>

namespace datrt {

struct ProfileEntry {
  std::string name;
  double ms = 0;
  int64_t bytes = -1; // the tensors it reads and writes; -1: not known
  long count = 0;     // how many times it ran in the call
};

/// Starts recording (from the next op group or launch on).
void profileStart();
/// Stops recording and returns what ran since profileStart.
std::vector<ProfileEntry> profileStop();

} // namespace datrt

#endif // DAT_RUNTIME_PROGRAM_PROFILE_H
