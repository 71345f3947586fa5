//===- GroupBlockOrder.cpp - transform.kforge.group_block_order -----------===//
//
// A 2-D grid's blocks renumbered so that the blocks resident at once cover a few block rows and many fewer
// columns than a whole row: they share more operand tiles through L2. A launch in clusters is renumbered
// cluster by cluster, each block keeping its place in its cluster. See the op's description in
// KforgeTransformOps.td.
//
//===----------------------------------------------------------------------===//

#include "Rewrites.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

FailureOr<gpu::LaunchOp> kforge::groupBlockOrder(RewriterBase &rewriter, gpu::LaunchOp launch, int64_t rows,
                                                 std::string &why) {
  int64_t clusterX = 1, clusterY = 1;
  if (launch.hasClusterSize()) {
    std::optional<int64_t> cx = getConstantIntValue(launch.getClusterSizeX()),
                           cy = getConstantIntValue(launch.getClusterSizeY());
    if (!cx || !cy || *cx < 1 || *cy < 1) {
      why = "the launch's cluster sizes are not constants: its clusters cannot be kept whole";
      return failure();
    }
    clusterX = *cx;
    clusterY = *cy;
  }
  gpu::KernelDim3 ids = launch.getBlockIds(), grid = launch.getGridSize();
  Block &body = launch.getBody().front();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(&body);
  Location loc = launch.getLoc();
  SmallPtrSet<Operation *, 32> renumbering;
  auto made = [&](Value v) {
    renumbering.insert(v.getDefiningOp());
    return v;
  };
  auto constant = [&](int64_t v) { return made(arith::ConstantIndexOp::create(rewriter, loc, v)); };
  auto add = [&](Value a, Value b) { return made(arith::AddIOp::create(rewriter, loc, a, b)); };
  auto mul = [&](Value a, Value b) { return made(arith::MulIOp::create(rewriter, loc, a, b)); };
  auto div = [&](Value a, Value b) { return made(arith::DivUIOp::create(rewriter, loc, a, b)); };
  auto rem = [&](Value a, Value b) { return made(arith::RemUIOp::create(rewriter, loc, a, b)); };
  // The grid of clusters (of single blocks without clusters): CUDA launches whole clusters, so the grid's sizes
  // are multiples of the cluster's.
  Value cx = clusterX == 1 ? Value() : constant(clusterX), cy = clusterY == 1 ? Value() : constant(clusterY);
  Value group = constant(rows);
  auto divBy = [&](Value a, int64_t size, Value sizeValue) { return size == 1 ? a : div(a, sizeValue); };
  auto placeIn = [&](Value clusterIndex, Value id, int64_t size, Value sizeValue) {
    return size == 1 ? clusterIndex : add(mul(clusterIndex, sizeValue), rem(id, sizeValue));
  };
  Value columns = divBy(grid.x, clusterX, cx), clusterRows = divBy(grid.y, clusterY, cy);
  Value qx = divBy(ids.x, clusterX, cx), qy = divBy(ids.y, clusterY, cy);
  // p = qy * columns + qx; each group holds `rows` cluster rows (the last one what is left), taken column by
  // column.
  Value linear = add(mul(qy, columns), qx);
  Value perGroup = mul(group, columns);
  Value firstRow = mul(div(linear, perGroup), group);
  Value groupRows = made(
      arith::MinUIOp::create(rewriter, loc, made(arith::SubIOp::create(rewriter, loc, clusterRows, firstRow)), group));
  Value inGroup = rem(linear, perGroup);
  Value y = placeIn(add(firstRow, rem(inGroup, groupRows)), ids.y, clusterY, cy);
  Value x = placeIn(div(inGroup, groupRows), ids.x, clusterX, cx);
  auto outsideRenumbering = [&](OpOperand &use) { return !renumbering.contains(use.getOwner()); };
  rewriter.replaceUsesWithIf(ids.x, x, outsideRenumbering);
  rewriter.replaceUsesWithIf(ids.y, y, outsideRenumbering);
  return launch;
}
