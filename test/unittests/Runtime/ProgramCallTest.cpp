//===- ProgramCallTest.cpp - a call's results copied out ------------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Call::copyResult (lib/Runtime/Program/Program.cpp) copies a result view
// the compiled code returned into a contiguous row-major buffer. A stand-in
// entry function returns views of a host buffer with the strides a program
// may give (row-major, transposed, padded rows, unit dimensions with any
// stride); each copy is checked against the view read an element at a time.
// Another receives a weight the call packed at bind time, from a
// safetensors file: transposed, and on a cache line.
//
//===----------------------------------------------------------------------===//

#include "Program/Program.h"

#include "dat/Support/SafeTensors.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

namespace {

// What the stand-in entry returns: the view's offset, sizes and strides
// over `gData`.
std::vector<float> gData;
int64_t gOffset = 0;
std::vector<int64_t> gSizes, gStrides;

void entry(void **args) {
  auto *desc = static_cast<int64_t *>(args[0]);
  desc[0] = 0xdeadbeef; // not heap memory: a constant's marker
  desc[1] = reinterpret_cast<int64_t>(gData.data());
  desc[2] = gOffset;
  for (size_t k = 0; k < gSizes.size(); ++k) {
    desc[3 + k] = gSizes[k];
    desc[3 + gSizes.size() + k] = gStrides[k];
  }
}

datrt::Call makeCall(const std::vector<int64_t> &shape) {
  std::string dims;
  for (int64_t s : shape)
    dims += (dims.empty() ? "" : ", ") + std::to_string(s);
  std::string text = R"({"args": [], "results": [{"name": "y", "dtype": "f32",
                          "shape": [)" +
                     dims + "]}]}";
  dat::json::Value section;
  std::string error;
  EXPECT_TRUE(dat::json::parse(text, section, error)) << error;
  return datrt::Call(section, entry);
}

/// The view read an element at a time, row-major.
std::vector<float> expected() {
  int64_t n = 1;
  for (int64_t s : gSizes)
    n *= s;
  std::vector<float> out;
  std::vector<int64_t> idx(gSizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = gOffset;
    for (size_t k = 0; k < gSizes.size(); ++k)
      off += idx[k] * gStrides[k];
    out.push_back(gData[off]);
    for (size_t k = gSizes.size(); k-- > 0;)
      if (++idx[k] < gSizes[k])
        break;
      else
        idx[k] = 0;
  }
  return out;
}

void checkView(int64_t offset, std::vector<int64_t> sizes,
               std::vector<int64_t> strides, size_t bufferElements) {
  gData.resize(bufferElements);
  std::iota(gData.begin(), gData.end(), 0.5f);
  gOffset = offset;
  gSizes = sizes;
  gStrides = strides;
  datrt::Call call = makeCall(sizes);
  call.run();
  std::vector<float> want = expected();
  std::vector<float> got(want.size(), -1.0f);
  call.copyResult(0, got.data());
  EXPECT_EQ(got, want);
}

TEST(ProgramCall, RowMajorResultsCopyWhole) {
  checkView(0, {2, 3, 4}, {12, 4, 1}, 24);
  checkView(5, {2, 3, 4}, {12, 4, 1}, 29); // past an offset
  checkView(0, {7}, {1}, 7);
}

TEST(ProgramCall, StridedResultsCopyByElementOrRow) {
  checkView(0, {3, 4}, {1, 3}, 12);        // transposed: by element
  checkView(0, {2, 3, 4}, {24, 4, 1}, 48); // padded rows: blocks of 12
  checkView(2, {2, 3, 4}, {16, 5, 1}, 40); // padded inner rows: of 4
  checkView(0, {4, 2}, {2, 8}, 16);        // inner dimension strided
}

TEST(ProgramCall, UnitDimensionsTakeAnyStride) {
  checkView(1, {1, 3, 1, 2}, {999, 2, 777, 1}, 7);
  checkView(0, {3, 1}, {1, 5}, 3);
}

// What the compiled code received as its one argument's data.
const float *gBound = nullptr;
void receive(void **args) {
  gBound = reinterpret_cast<const float *>(static_cast<int64_t *>(args[0])[1]);
}

TEST(ProgramCall, PackedWeightsAreTransposedOntoACacheLine) {
  // A [256, 192] weight the program reads as [192, 256]; a file puts it
  // wherever its header ends (safetensors does not align), and glibc gives
  // a plain std::vector of its 192 KiB an mmap block, 16 bytes past a page.
  std::vector<float> w(256 * 192);
  std::iota(w.begin(), w.end(), 0.0f);
  std::string path = ::testing::TempDir() + "/packed-weight.safetensors", error;
  ASSERT_TRUE(dat::writeSafeTensors(
      path, {{"w", dat::DType::F32, {256, 192}, w.data()}}, {}, error))
      << error;
  std::unique_ptr<dat::SafeTensorsFile> file =
      dat::SafeTensorsFile::open(path, error);
  ASSERT_TRUE(file) << error;
  dat::json::Value section;
  ASSERT_TRUE(dat::json::parse(
      R"({"args": [{"name": "w", "kind": "weight", "dtype": "f32",
                    "shape": [192, 256], "permutation": [1, 0]}],
          "results": []})",
      section, error))
      << error;
  datrt::Call call(section, receive);
  call.bindWeights(*file);
  call.run();
  ASSERT_NE(gBound, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(gBound) % 64, 0u);
  for (int i = 0; i < 192; ++i)
    for (int j = 0; j < 256; ++j)
      ASSERT_EQ(gBound[i * 256 + j], w[j * 192 + i]) << i << " " << j;
}

} // namespace
