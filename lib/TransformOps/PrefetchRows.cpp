//===- PrefetchRows.cpp - transform.kforge.prefetch_rows_to_l2 -------------===//
//
// A row kernel (one row per block) asks L2 for the row a block `ahead` later will read: one bulk prefetch per
// input row at the kernel's start, by one thread. See the op's description in KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "Rewrites.h"
#include "RowKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace {
/// An input read one row per block: its memref, rows, and the row's bytes and stride in elements.
struct RowInput {
  Value memref;
  int64_t rows, rowBytes, rowStride, offset, elementBytes;
  /// Whether every row starts 16-byte aligned and is whole 16-byte pieces (the bulk prefetch takes it as it is);
  /// otherwise the prefetch takes the 16-byte pieces from the one holding the row's start to the last one that
  /// ends inside the row.
  bool aligned;
};
} // namespace

/// The kernel inputs the launch reads a row of at [block_id x, 0], each once, in the order first read; only
/// those a bulk prefetch can take (a static layout, rows of at least 16 bytes).
static SmallVector<RowInput> rowInputs(gpu::LaunchOp launch) {
  DenseSet<Value> written = kforge::writtenRoots(launch);
  SmallVector<RowInput> inputs;
  DenseSet<Value> seen;
  launch.getBody().walk([&](memref::SubViewOp view) {
    Value source = view.getSource();
    if (!kforge::isBlockRow(view, launch, written) || seen.contains(source))
      return;
    auto type = cast<MemRefType>(source.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) || ShapedType::isDynamic(offset) ||
        ShapedType::isDynamic(strides[0]) || strides[1] != 1 || !type.getElementType().isIntOrFloat())
      return;
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t rowBytes = type.getDimSize(1) * elementBytes;
    // kforge's ABI aligns every buffer to 16 bytes. A row whose start or size is not a multiple of 16 bytes (a
    // 50257-wide f32 row) is prefetched as the 16-byte pieces from the one holding its start to the last one
    // ending inside it: a few bytes of the row before it, none past the buffer, at most 12 bytes of its end left
    // to the loads.
    if (elementBytes == 0 || rowBytes < 16 || rowBytes >= (int64_t(1) << 31))
      return;
    bool aligned = rowBytes % 16 == 0 && (strides[0] * elementBytes) % 16 == 0 && (offset * elementBytes) % 16 == 0;
    seen.insert(source);
    inputs.push_back({source, type.getDimSize(0), rowBytes, strides[0], offset, elementBytes, aligned});
  });
  return inputs;
}

FailureOr<gpu::LaunchOp> kforge::prefetchRowsToL2(RewriterBase &rewriter, gpu::LaunchOp launch, int64_t ahead,
                                                  std::string &why) {
  SmallVector<RowInput> inputs = rowInputs(launch);
  if (inputs.empty())
    return reject(why, "the launch reads no row of a kernel input at [block_id x, 0] (sizes [1, N], unit strides, "
                       "not written by the kernel, rows of at least 16 bytes)");

  // Thread (0, 0, 0) of block b: if b + ahead is a row, prefetch that row of every input.
  Location loc = launch.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&launch.getBody().front());
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(rewriter, loc, v).getResult(); };
  Value zero = index(0);
  Value first;
  for (gpu::Dimension d : {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z}) {
    Value id = gpu::ThreadIdOp::create(rewriter, loc, d);
    Value isZero = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq, id, zero);
    first = first ? arith::AndIOp::create(rewriter, loc, first, isZero).getResult() : isZero;
  }
  Value block = gpu::BlockIdOp::create(rewriter, loc, gpu::Dimension::x);
  Value next = arith::AddIOp::create(rewriter, loc, block, index(ahead));
  Value rows = index(inputs.front().rows);
  for (const RowInput &input : ArrayRef(inputs).drop_front())
    rows = arith::MinUIOp::create(rewriter, loc, rows, index(input.rows));
  Value exists = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, next, rows);
  Value prefetch = arith::AndIOp::create(rewriter, loc, first, exists);
  auto ifOp = scf::IfOp::create(rewriter, loc, prefetch, /*withElseRegion=*/false);
  rewriter.setInsertionPointToStart(ifOp.thenBlock());
  MLIRContext *ctx = rewriter.getContext();
  for (const RowInput &input : inputs) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(rewriter, loc, input.memref);
    // Byte address of row `next`: base + (offset + next * stride) * element bytes.
    Value element = arith::AddIOp::create(rewriter, loc, index(input.offset),
                                          arith::MulIOp::create(rewriter, loc, next, index(input.rowStride)));
    Value bytes = arith::MulIOp::create(rewriter, loc, element, index(input.elementBytes));
    Value start = arith::AddIOp::create(rewriter, loc, base, bytes);
    Value size;
    if (input.aligned) {
      size = arith::ConstantIntOp::create(rewriter, loc, rewriter.getI32Type(), input.rowBytes);
    } else {
      // [start rounded down, end rounded down to 16 bytes): inside the buffer, at least 16 bytes for rows of 16.
      Value pieces = index(~int64_t(15));
      Value end = arith::AddIOp::create(rewriter, loc, start, index(input.rowBytes));
      start = arith::AndIOp::create(rewriter, loc, start, pieces);
      Value length = arith::SubIOp::create(rewriter, loc, arith::AndIOp::create(rewriter, loc, end, pieces), start);
      size = arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI32Type(), length);
    }
    Value address = arith::IndexCastUIOp::create(rewriter, loc, rewriter.getI64Type(), start);
    Value generic = LLVM::IntToPtrOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx), address);
    Value global = LLVM::AddrSpaceCastOp::create(rewriter, loc, LLVM::LLVMPointerType::get(ctx, 1), generic);
    NVVM::CpAsyncBulkPrefetchOp::create(rewriter, loc, global, size, /*l2CacheHint=*/Value());
  }
  return launch;
}
