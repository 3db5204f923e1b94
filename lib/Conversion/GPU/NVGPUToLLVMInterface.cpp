//===- NVGPUToLLVMInterface.cpp - nvgpu in convert-gpu-to-nvvm ------------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Upstream lowers nvgpu ops in a pass of their own (convert-nvgpu-to-nvvm)
// whose type converter always makes `index` 64 bits wide. A kernel lowered
// with 32-bit indices (convert-gpu-to-nvvm's `index-bitwidth`) then meets
// memref descriptors of two widths that no cast reconciles. Giving nvgpu
// the ConvertToLLVMPatternInterface lets convert-gpu-to-nvvm lower its ops
// in the same conversion, with the same type converter.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"

namespace mlir::dat {
namespace {

struct NVGPUToLLVMInterface : public ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;

  void loadDependentDialects(MLIRContext *context) const final {
    context->loadDialect<NVVM::NVVMDialect>();
  }

  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    // As convert-nvgpu-to-nvvm: the device-side async tokens of cp.async
    // groups have no NVVM value; a dummy i32 is dropped with them.
    converter.addConversion([](nvgpu::DeviceAsyncTokenType type) -> Type {
      return IntegerType::get(type.getContext(), 32);
    });
    populateNVGPUToNVVMConversionPatterns(converter, patterns);
  }
};

} // namespace

void registerNVGPUToLLVMInterface(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *, nvgpu::NVGPUDialect *dialect) {
    dialect->addInterfaces<NVGPUToLLVMInterface>();
  });
}

} // namespace mlir::dat
