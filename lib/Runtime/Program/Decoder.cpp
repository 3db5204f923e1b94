//===- Decoder.cpp - a language model's decode step and its caches --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include "ProgramMemory.h"

#include <algorithm>
#include <set>

namespace datrt {

size_t findSlot(const std::vector<Slot> &slots, const char *name) {
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].name == name)
      return i;
  fail(std::string("corrupt manifest: no '") + name + "' slot");
}

Decoder::Decoder(const dat::json::Value &stepSection, void (*stepFn)(void **))
    : call(stepSection, stepFn), idxSlot(findSlot(call.args, "idx")),
      posSlot(findSlot(call.args, "position")) {
  caches.resize(call.args.size());
  resident.resize(call.args.size(), {nullptr, nullptr});
  for (size_t i = 0; i < call.args.size(); ++i)
    if (call.args[i].kind == Slot::Cache) {
      caches[i].resize(call.args[i].numElements() *
                       dat::dtypeSize(call.args[i].dtype));
      cacheArgs.push_back(
          {findSlot(call.results, call.args[i].name.c_str()), i});
    }
  reset();
}

Decoder::~Decoder() { releaseResident(); }

void Decoder::releaseResident() {
  for (auto &[allocated, data] : resident)
    if (allocated) {
      freeProgramBuffer(allocated);
      allocated = nullptr;
      data = nullptr;
    }
}

void Decoder::reset() {
  releaseResident();
  for (std::vector<uint8_t> &c : caches)
    std::fill(c.begin(), c.end(), 0);
  pos = 0;
}

void Decoder::step(const int64_t *tokens, void *out, const std::string &what) {
  if (pos >= maxLength())
    fail(what + ": position " + std::to_string(pos) +
         " is past the caches' length (max_block_size " +
         std::to_string(maxLength()) + ")");
  checkValues(call.args[idxSlot], tokens, what, false, "");
  int64_t position = pos;
  // Bind after every change: binding is where the program's view of a
  // host buffer is made (on the GPU, a copy into device memory), so a
  // buffer changed after it was bound would be stale.
  call.bind(idxSlot, tokens);
  call.bind(posSlot, &position);
  for (auto [r, a] : cacheArgs)
    call.bind(a, resident[a].second ? resident[a].second : caches[a].data());
  call.run();
  call.copyResult(0, out);
  // The updated caches stay where the step left them and are the next
  // step's arguments: no copy through the host per token. (One that is
  // not a buffer of its own comes back to the host copy.)
  std::vector<std::pair<void *, const void *>> previous = resident;
  std::set<size_t> kept;
  for (auto [r, a] : cacheArgs) {
    resident[a] = call.resultBuffer(r);
    if (resident[a].first)
      kept.insert(r);
    else
      call.copyResult(r, caches[a].data());
  }
  call.freeResults(kept);
  std::set<void *> stillUsed;
  for (auto &[allocated, data] : resident)
    stillUsed.insert(allocated);
  for (auto &[allocated, data] : previous)
    if (allocated && !stillUsed.count(allocated))
      freeProgramBuffer(allocated);
  ++pos;
}

} // namespace datrt
