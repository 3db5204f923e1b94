//===- FakeCublas.cpp - cuBLAS's entry points that do nothing, for tests --===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

static int liveHandles;

extern "C" {
int cublasCreate_v2(void **handle) {
  static int h;
  *handle = &h;
  ++liveHandles;
  return 0;
}
int cublasDestroy_v2(void *) {
  --liveHandles;
  return 0;
}
/// Handles created and not destroyed (the runtime must destroy its own).
int fake_cublas_live_handles() { return liveHandles; }
int cublasSetStream_v2(void *, void *) { return 0; }
int cublasGemmEx(void *, int, int, int, int, int, const void *, const void *,
                 int, int, const void *, int, int, const void *, void *, int,
                 int, int, int) {
  return 0;
}
}
