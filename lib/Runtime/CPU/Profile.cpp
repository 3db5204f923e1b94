//===- Profile.cpp - CPU programs' op-group times (prog --profile) --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat-profile-points brackets each op group with dat_profile_begin/end(id)
// and names the ids in dat_profile_points (JSON). The calls return at once
// unless profileStart ran; they come from the program's main thread (the
// groups are top-level ops; their tiles run on OpenMP threads inside).
//
//===----------------------------------------------------------------------===//

#include "../Program/Profile.h"
#include "../Program/Program.h"

#include "dat/Support/TinyJson.h"

#include <chrono>
#include <map>

extern "C" __attribute__((weak)) const char dat_profile_points[];

namespace {
using Clock = std::chrono::steady_clock;
bool recording = false;
std::map<int64_t, Clock::time_point> &open() {
  static std::map<int64_t, Clock::time_point> o;
  return o;
}
std::map<int64_t, datrt::ProfileEntry> &totals() {
  static std::map<int64_t, datrt::ProfileEntry> t;
  return t;
}

void begin(int64_t id) {
  if (recording)
    open()[id] = Clock::now();
}

void end(int64_t id) {
  if (!recording)
    return;
  auto it = open().find(id);
  if (it == open().end())
    return;
  datrt::ProfileEntry &e = totals()[id];
  e.ms += std::chrono::duration<double, std::milli>(Clock::now() - it->second)
              .count();
  ++e.count;
  open().erase(it);
}
} // namespace

extern "C" {
void dat_profile_begin(int64_t id) { begin(id); }
void dat_profile_end(int64_t id) { end(id); }
// The C-interface names the lowered calls use (llvm.emit_c_interface).
void _mlir_ciface_dat_profile_begin(int64_t id) { begin(id); }
void _mlir_ciface_dat_profile_end(int64_t id) { end(id); }
}

namespace datrt {

void profileStart() {
  open().clear();
  totals().clear();
  recording = true;
}

std::vector<ProfileEntry> profileStop() {
  recording = false;
  dat::json::Value points;
  std::string error;
  if (!dat_profile_points ||
      !dat::json::parse(dat_profile_points, points, error))
    fail("--profile: this program has no profile points (compiled with "
         "profile-points=false, or by an older datc)");
  std::vector<ProfileEntry> out;
  for (auto &[id, e] : totals()) {
    ProfileEntry entry = e;
    const dat::json::Value *point =
        points.kind == dat::json::Value::Array &&
                id < static_cast<int64_t>(points.array.size())
            ? &points.array[id]
            : nullptr;
    const dat::json::Value *name = point ? point->get("name") : nullptr;
    const dat::json::Value *bytes = point ? point->get("bytes") : nullptr;
    entry.name = name && name->kind == dat::json::Value::String
                     ? name->string
                     : "op group " + std::to_string(id);
    entry.bytes = bytes && bytes->isInteger ? bytes->integer : -1;
    out.push_back(entry);
  }
  return out;
}

} // namespace datrt
