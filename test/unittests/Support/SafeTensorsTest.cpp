//===- SafeTensorsTest.cpp - safetensors reader/writer tests --------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Support/SafeTensors.h"
#include "dat/Support/TinyJson.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <unistd.h>

using namespace dat;

namespace {

/// A file made of an 8-byte length, `header` (padded to 8) and `dataBytes`
/// bytes of data counting up from 0.
std::string makeFile(std::string header, size_t dataBytes,
                     uint64_t lengthOverride = ~uint64_t(0)) {
  while (header.size() % 8)
    header += ' ';
  uint64_t len =
      lengthOverride != ~uint64_t(0) ? lengthOverride : header.size();
  std::string file(8, '\0');
  for (int i = 0; i < 8; ++i)
    file[i] = char(len >> (8 * i));
  file += header;
  for (size_t i = 0; i < dataBytes; ++i)
    file += char(i);
  return file;
}

std::string openError(const std::string &bytes) {
  std::string error;
  auto f = SafeTensorsFile::fromBuffer(bytes, "t.safetensors", error);
  EXPECT_EQ(f, nullptr) << "accepted a malformed file";
  return error;
}

const char *kTwo = R"({"__metadata__":{"format":"pt"},)"
                   R"("a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
                   R"("b":{"dtype":"I64","shape":[1],"data_offsets":[24,32]}})";

TEST(SafeTensors, ReadsValidFile) {
  std::string error;
  auto f = SafeTensorsFile::fromBuffer(makeFile(kTwo, 32), "t", error);
  ASSERT_NE(f, nullptr) << error;
  ASSERT_EQ(f->tensors().size(), 2u);
  const TensorView *a = f->find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a->numElements(), 6);
  EXPECT_EQ(a->data[0], 0);
  const TensorView *b = f->find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->data[0], 24);
  EXPECT_EQ(f->metadata().at("format"), "pt");
  EXPECT_EQ(f->find("c"), nullptr);
}

TEST(SafeTensors, RejectsTruncatedLength) {
  EXPECT_NE(openError("abc").find("too small"), std::string::npos);
}

TEST(SafeTensors, RejectsHeaderPastEnd) {
  std::string e = openError(makeFile(kTwo, 32, 1000));
  EXPECT_NE(e.find("header length 1000 runs past the end of the file"),
            std::string::npos)
      << e;
}

TEST(SafeTensors, RejectsHugeHeaderLength) {
  std::string e = openError(makeFile("{}", 0, uint64_t(1) << 40));
  EXPECT_NE(e.find("exceeds the 100 MiB limit"), std::string::npos) << e;
}

TEST(SafeTensors, RejectsMalformedJson) {
  std::string e = openError(makeFile(R"({"a":{"dtype":"F32",)", 0));
  EXPECT_NE(e.find("header is not valid JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("t.safetensors"), std::string::npos) << e;
}

TEST(SafeTensors, RejectsOffsetsPastData) {
  std::string e = openError(makeFile(
      R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8));
  EXPECT_NE(e.find("tensor 'a': data_offsets [0, 16] run past the data "
                   "section (8 bytes)"),
            std::string::npos)
      << e;
}

TEST(SafeTensors, RejectsSizeMismatch) {
  std::string e = openError(makeFile(
      R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}})", 16));
  EXPECT_NE(e.find("tensor 'a': holds 16 bytes, but dtype F32 and shape need "
                   "12 bytes"),
            std::string::npos)
      << e;
}

TEST(SafeTensors, RejectsOverlap) {
  std::string e = openError(
      makeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
               R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
               12));
  EXPECT_NE(e.find("overlaps"), std::string::npos) << e;
}

TEST(SafeTensors, RejectsHoleAndTrailingBytes) {
  std::string hole = openError(
      makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8));
  EXPECT_NE(hole.find("hole in the data section before tensor 'a'"),
            std::string::npos)
      << hole;
  std::string trail = openError(
      makeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8));
  EXPECT_NE(trail.find("4 trailing bytes"), std::string::npos) << trail;
}

TEST(SafeTensors, RejectsBadEntries) {
  auto err = [](const char *h) { return openError(makeFile(h, 4)); };
  EXPECT_NE(err(R"({"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,4]}})")
                .find("unsupported dtype 'Q7'"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})")
                .find("shape entries must be non-negative integers"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}})")
                .find("reversed"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1]}})").find("data_offsets"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})")
                .find("appears twice"),
            std::string::npos);
  EXPECT_NE(err(R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776],)"
                R"("data_offsets":[0,4]}})")
                .find("too large"),
            std::string::npos);
  EXPECT_NE(err(R"([1,2])").find("not a JSON object"), std::string::npos);
  EXPECT_NE(err(R"({"__metadata__":{"k":1}})").find("is not a string"),
            std::string::npos);
}

TEST(SafeTensors, WriteThenReadRoundTrips) {
  float a[6] = {1, 2, 3, 4, 5, 6};
  int64_t b[2] = {-7, 1LL << 40};
  std::string path = ::testing::TempDir() + "/roundtrip.safetensors";
  std::string error;
  ASSERT_TRUE(writeSafeTensors(
      path, {{"z.b", DType::I64, {2}, b}, {"a \"q\"", DType::F32, {2, 3}, a}},
      {{"case", "x"}}, error))
      << error;
  auto f = SafeTensorsFile::open(path, error);
  ASSERT_NE(f, nullptr) << error;
  ASSERT_EQ(f->tensors().size(), 2u);
  EXPECT_EQ(f->tensors()[0].name, "a \"q\""); // sorted by name
  const TensorView *tb = f->find("z.b");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(std::memcmp(tb->data, b, sizeof(b)), 0);
  EXPECT_EQ(std::memcmp(f->find("a \"q\"")->data, a, sizeof(a)), 0);
  EXPECT_EQ(f->metadata().at("case"), "x");
  std::remove(path.c_str());
}

TEST(SafeTensors, WriteFailureLeavesNoFile) {
  float a[1] = {1};
  std::string error;
  std::string path = "/nonexistent-dir/out.safetensors";
  EXPECT_FALSE(writeSafeTensors(path, {{"a", DType::F32, {1}, a}}, {}, error));
  EXPECT_NE(error.find("/nonexistent-dir/out.safetensors: cannot write"),
            std::string::npos)
      << error;
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(SafeTensors, OpenMissingFileNamesIt) {
  std::string error;
  EXPECT_EQ(SafeTensorsFile::open("/no/such/file.safetensors", error), nullptr);
  EXPECT_NE(error.find("/no/such/file.safetensors: cannot open"),
            std::string::npos);
}

TEST(TinyJson, ParsesAndRejects) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(
      json::parse(R"( {"a":[1,-2.5e3,true,null,"\u00e9\n"]} )", v, error))
      << error;
  const json::Value *a = v.get("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->array.size(), 5u);
  EXPECT_TRUE(a->array[0].isInteger);
  EXPECT_EQ(a->array[0].integer, 1);
  EXPECT_DOUBLE_EQ(a->array[1].number, -2500.0);
  EXPECT_FALSE(a->array[1].isInteger);
  EXPECT_EQ(a->array[4].string, "\xc3\xa9\n");
  for (const char *bad : {"", "{", "[1,]", "{\"a\" 1}", "01", "\"\\x\"",
                          "[1] 2", "\"\\ud800\"", "tru"})
    EXPECT_FALSE(json::parse(bad, v, error)) << bad;
  std::string deep(1000, '[');
  EXPECT_FALSE(json::parse(deep, v, error));
  EXPECT_NE(error.find("nesting too deep"), std::string::npos);
}

} // namespace

namespace {
// A torch.save checkpoint is named as such, with the conversion; a real
// safetensors file whose header length begins like a pickle (0x80 0x02:
// a 640-byte header) is not taken for one.
TEST(SafeTensors, RecognisesPyTorchCheckpointsOnly) {
  std::string error;
  std::string zip("PK\x03\x04 not a safetensors file", 28);
  EXPECT_FALSE(dat::SafeTensorsFile::fromBuffer(zip, "model.pt", error));
  EXPECT_NE(error.find("PyTorch checkpoint (torch.save, a zip archive)"),
            std::string::npos)
      << error;
  std::string header = "{\"__metadata__\":{}}";
  header.resize(640, ' ');
  std::string file(8, '\0');
  file[0] = '\x80';
  file[1] = '\x02';
  file += header;
  ASSERT_TRUE(dat::SafeTensorsFile::fromBuffer(file, "ok.safetensors", error))
      << error;
}
} // namespace
