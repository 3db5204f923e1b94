//===- RegisterBudget.cpp - fewer blocks per SM where ptxas spills --------===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// dat-gpu-kernel-occupancy chooses each kernel's blocks per SM from rules;
// what registers a tile needs is only known to ptxas. This pass asks it:
// the module is serialized through its own target (as gpu-module-to-binary
// does), assembled with `ptxas -v`, and each kernel that spills more than a
// few bytes gets one block per SM fewer while that gives it more registers
// and fewer spills.
//
//===----------------------------------------------------------------------===//

#include "dat/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::dat {
#define GEN_PASS_DEF_DATGPUREGISTERBUDGET
#include "dat/Conversion/Passes.h.inc"

/// The most blocks per SM below `blocks` that give a thread more registers
/// than `blocks` do; 0 where none does.
static int64_t fewerBlocks(int64_t blocks, int64_t threads) {
  for (int64_t fewer = blocks - 1; fewer >= 1; --fewer)
    if (registersPerThreadAt(fewer, threads) >
        registersPerThreadAt(blocks, threads))
      return fewer;
  return 0;
}

namespace {
/// A kernel whose blocks per SM the pass may lower.
struct Candidate {
  LLVM::LLVMFuncOp fn;
  int64_t threads;
  int64_t blocks;
  /// ptxas's spill bytes (stores and loads) at `blocks`.
  int64_t spills = 0;
};

struct GPURegisterBudgetPass final
    : impl::DatGPURegisterBudgetBase<GPURegisterBudgetPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  LogicalResult budget(gpu::GPUModuleOp module, StringRef ptxas,
                       function_ref<SymbolTable *()> symbolTable);
  FailureOr<llvm::StringMap<int64_t>>
  spillsByKernel(gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target,
                 StringRef ptxas, function_ref<SymbolTable *()> symbolTable);
};
} // namespace

static std::string toolkitFolder(StringRef option) {
  return option.empty() ? defaultCudaToolkit() : option.str();
}

/// Spill bytes per function in `ptxas -v`'s report: each
/// "Function properties for NAME" is followed by its stack line.
static llvm::StringMap<int64_t> parsePtxasReport(StringRef report) {
  llvm::StringMap<int64_t> spills;
  llvm::Regex function("Function properties for ([^ \t\r\n]+)");
  llvm::Regex stores("([0-9]+) bytes spill stores");
  llvm::Regex loads("([0-9]+) bytes spill loads");
  StringRef current;
  SmallVector<StringRef> lines;
  report.split(lines, '\n');
  for (StringRef line : lines) {
    SmallVector<StringRef, 2> match;
    if (function.match(line, &match)) {
      current = match[1];
      spills[current] = 0;
      continue;
    }
    if (current.empty())
      continue;
    int64_t bytes = 0, value;
    if (stores.match(line, &match) && !match[1].getAsInteger(10, value))
      bytes += value;
    if (loads.match(line, &match) && !match[1].getAsInteger(10, value))
      bytes += value;
    spills[current] += bytes;
  }
  return spills;
}

FailureOr<llvm::StringMap<int64_t>> GPURegisterBudgetPass::spillsByKernel(
    gpu::GPUModuleOp module, NVVM::NVVMTargetAttr target, StringRef ptxas,
    function_ref<SymbolTable *()> tableOf) {
  gpu::TargetOptions options(toolkitFolder(toolkit), /*librariesToLink=*/{},
                             /*cmdOptions=*/"", /*elfSection=*/"",
                             gpu::CompilationTarget::Assembly, tableOf);
  std::optional<SmallVector<char, 0>> ptx =
      cast<gpu::TargetAttrInterface>(target).serializeToObject(module, options);
  if (!ptx)
    return module.emitError()
           << getArgument() << ": could not serialize the module to PTX";
  // The serializer records its time on the module; gpu-module-to-binary
  // records its own.
  module->removeAttr("LLVMIRToISATimeInMs");
  module->removeAttr("ISAToBinaryTimeInMs");
  StringRef text(ptx->data(), ptx->size());
  text = text.rtrim('\0');

  SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("dat-register-budget", "ptx", fd,
                                         ptxPath) ||
      llvm::sys::fs::createTemporaryFile("dat-register-budget", "cubin",
                                         cubinPath) ||
      llvm::sys::fs::createTemporaryFile("dat-register-budget", "log", logPath))
    return module.emitError()
           << getArgument() << ": could not create temporary files";
  llvm::FileRemover removePtx(ptxPath), removeCubin(cubinPath),
      removeLog(logPath);
  {
    llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
    out << text;
  }

  std::string arch = ("-arch=" + target.getChip()).str();
  SmallVector<StringRef> args = {ptxas, arch, "-v", "-o", cubinPath, ptxPath};
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         0, 0, &message);
  auto log = llvm::MemoryBuffer::getFile(logPath);
  StringRef report = log ? (*log)->getBuffer() : StringRef();
  if (status != 0)
    return module.emitError()
           << getArgument() << ": " << ptxas << " failed on module "
           << module.getName() << (message.empty() ? "" : ": ") << message
           << "\n"
           << report.trim();
  return parsePtxasReport(report);
}

LogicalResult
GPURegisterBudgetPass::budget(gpu::GPUModuleOp module, StringRef ptxas,
                              function_ref<SymbolTable *()> symbolTable) {
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets || targets.size() != 1)
    return success();
  auto target = dyn_cast<NVVM::NVVMTargetAttr>(targets[0]);
  if (!target)
    return success();

  // Only modules with shared memory hold tile kernels: the others (one
  // thread per element of a linalg op) keep a few values per thread, and
  // assembling each of them twice would cost more than it could find.
  bool shared = llvm::any_of(module.getOps<LLVM::GlobalOp>(), [](auto g) {
    return g.getAddrSpace() == NVVM::NVVMMemorySpace::Shared;
  });
  if (!shared)
    return success();

  // Kernels whose bound leaves them fewer registers than ptxas could give.
  SmallVector<Candidate> candidates;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    auto blocks = fn->getAttrOfType<IntegerAttr>(
        NVVM::NVVMDialect::getMinctasmAttrName());
    auto size = fn->getAttrOfType<DenseI32ArrayAttr>(
        NVVM::NVVMDialect::getMaxntidAttrName());
    if (!fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()) || !blocks ||
        !size)
      continue;
    int64_t threads = 1;
    for (int32_t extent : size.asArrayRef())
      threads *= extent;
    if (threads <= 0 || fewerBlocks(blocks.getInt(), threads) == 0)
      continue;
    candidates.push_back({fn, threads, blocks.getInt()});
  }
  if (candidates.empty())
    return success();

  auto setBlocks = [](LLVM::LLVMFuncOp fn, int64_t blocks) {
    fn->setAttr(NVVM::NVVMDialect::getMinctasmAttrName(),
                Builder(fn.getContext()).getI32IntegerAttr(blocks));
  };
  FailureOr<llvm::StringMap<int64_t>> spills =
      spillsByKernel(module, target, ptxas, symbolTable);
  if (failed(spills))
    return failure();
  SmallVector<Candidate *> pending;
  for (Candidate &c : candidates) {
    c.spills = spills->lookup(c.fn.getName());
    if (c.spills > toleratedSpills)
      pending.push_back(&c);
    else if (c.spills > 0 && report)
      c.fn.emitRemark() << getArgument() << ": " << c.fn.getName() << " spills "
                        << c.spills << " bytes at " << c.blocks
                        << " blocks per SM; kept (tolerated-spills "
                        << toleratedSpills.getValue() << ")";
  }

  // Fewer blocks for every spilling kernel at once (the most that give it
  // more registers): ptxas assembles each kernel on its own, so one run
  // answers for all of them.
  while (!pending.empty()) {
    for (Candidate *c : pending)
      setBlocks(c->fn, fewerBlocks(c->blocks, c->threads));
    spills = spillsByKernel(module, target, ptxas, symbolTable);
    if (failed(spills))
      return failure();
    SmallVector<Candidate *> next;
    for (Candidate *c : pending) {
      int64_t fewer = fewerBlocks(c->blocks, c->threads);
      int64_t now = spills->lookup(c->fn.getName());
      if (now >= c->spills) {
        // No better with more registers: keep the blocks it had.
        setBlocks(c->fn, c->blocks);
        if (report)
          c->fn.emitRemark()
              << getArgument() << ": " << c->fn.getName() << " spills "
              << c->spills << " bytes at " << c->blocks << " blocks per SM and "
              << now << " at " << fewer << "; kept " << c->blocks;
        continue;
      }
      if (report)
        c->fn.emitRemark() << getArgument() << ": " << c->fn.getName() << ": "
                           << c->blocks << " -> " << fewer
                           << " blocks per SM (up to "
                           << registersPerThreadAt(fewer, c->threads)
                           << " registers), spills " << c->spills << " -> "
                           << now << " bytes";
      c->blocks = fewer;
      c->spills = now;
      if (now > toleratedSpills && fewerBlocks(c->blocks, c->threads) > 0)
        next.push_back(c);
      else if (now > 0 && report)
        c->fn.emitRemark() << getArgument() << ": " << c->fn.getName()
                           << " still spills " << now << " bytes at "
                           << c->blocks << " blocks per SM";
    }
    pending = std::move(next);
  }
  return success();
}

void GPURegisterBudgetPass::runOnOperation() {
  std::string ptxas = toolkitFolder(toolkit) + "/bin/ptxas";
  // (GPU modules are the top module's children.)
  if (getOperation().getOps<gpu::GPUModuleOp>().empty())
    return;
  if (!llvm::sys::fs::can_execute(ptxas)) {
    getOperation().emitError()
        << getArgument() << ": ptxas not found at " << ptxas
        << " (set the toolkit option or CUDA_HOME)";
    return signalPassFailure();
  }
  std::unique_ptr<SymbolTable> table;
  auto symbolTable = [&]() -> SymbolTable * {
    if (!table)
      table = std::make_unique<SymbolTable>(getOperation());
    return table.get();
  };
  for (auto module : getOperation().getOps<gpu::GPUModuleOp>())
    if (failed(budget(module, ptxas, symbolTable)))
      return signalPassFailure();
}
} // namespace mlir::dat
