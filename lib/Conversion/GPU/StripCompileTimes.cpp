//===- StripCompileTimes.cpp - reproducible gpu.binary ops ----------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATGPUSTRIPCOMPILETIMES
#include "dat/Conversion/Passes.h.inc"

namespace {
struct DatGPUStripCompileTimes
    : public impl::DatGPUStripCompileTimesBase<DatGPUStripCompileTimes> {
  void runOnOperation() override {
    getOperation().walk([](gpu::BinaryOp binary) {
      SmallVector<Attribute> objects;
      for (Attribute a : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(a);
        DictionaryAttr properties = object.getProperties();
        if (properties) {
          // Every property but the timings (named "...TimeInMs").
          SmallVector<NamedAttribute> kept = llvm::filter_to_vector(
              properties.getValue(), [](NamedAttribute p) {
                return !p.getName().getValue().ends_with("TimeInMs");
              });
          properties = kept.empty()
                           ? DictionaryAttr()
                           : DictionaryAttr::get(binary.getContext(), kept);
        }
        objects.push_back(gpu::ObjectAttr::get(
            binary.getContext(), object.getTarget(), object.getFormat(),
            object.getObject(), properties, object.getKernels()));
      }
      binary.setObjectsAttr(ArrayAttr::get(binary.getContext(), objects));
    });
  }
};
} // namespace
} // namespace mlir::dat
