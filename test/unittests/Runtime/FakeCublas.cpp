//===- FakeCublas.cpp - cuBLAS's entry points that do nothing, for tests --===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

extern "C" {
int cublasCreate_v2(void **handle) {
  static int h;
  *handle = &h;
  return 0;
}
int cublasSetStream_v2(void *, void *) { return 0; }
int cublasGemmEx(void *, int, int, int, int, int, const void *, const void *,
                 int, int, const void *, int, int, const void *, void *, int,
                 int, int, int) {
  return 0;
}
}
