//===- TileConfigs.cpp - ranked block and thread tiles for the heuristic ===//
//
// The tile configurations the heuristic ranks: matmul-like roots by operand reuse and occupancy, other roots by
// rows.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>

using namespace kforge::tune;
using namespace kforge::tune::search;
using llvm::StringRef;

namespace kforge::tune::search {

/// Blocks of one row over `lanes` lanes that fit on a multiprocessor at once, estimated: its resident threads
/// (`threadsPerMultiprocessor`), 65536 registers at one per value a lane holds of a `width`-wide row plus 32, at
/// most 32 blocks.
int64_t residentRowBlocks(int64_t lanes, int64_t width, int64_t threadsPerMultiprocessor) {
  int64_t registers = width / lanes + 32;
  return std::max<int64_t>(1, std::min({threadsPerMultiprocessor / lanes, 65536 / (lanes * registers), int64_t(32)}));
}

/// Matmul-like roots (the last two parallel loops are the output's rows and columns): output tiles that
/// reuse operands (large block tiles, 2-D thread tiles of 16-64 accumulators), enough blocks to fill every
/// multiprocessor, and blocks of 64-512 threads.
std::vector<TileConfig> contractionConfigs(const PayloadFacts &facts, const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  int64_t m = facts.parallelSizes[rank - 2], n = facts.parallelSizes[rank - 1];
  int64_t batch = 1;
  for (size_t d = 0; d + 2 < rank; ++d)
    batch *= facts.parallelSizes[d];
  std::vector<TileConfig> configs;
  bool isGpu = gpu(profile);
  // Block tiles of 32 to 128; for an irregular extent (2000 x 3000) its divisors in that range too.
  auto candidates = [](int64_t extent) {
    std::vector<int64_t> out = {32, 64, 128};
    if (irregularExtent(extent))
      for (int64_t v : blockSizes(extent))
        if (v >= 32 && v <= 128 && !llvm::is_contained(out, v))
          out.push_back(v);
    return out;
  };
  std::vector<std::pair<int64_t, int64_t>> threadTiles = {{4, 4}, {4, 8}, {8, 4}, {8, 8}, {2, 4}, {4, 2}};
  for (int64_t bm : candidates(m))
    for (int64_t bn : candidates(n))
      for (auto [tm, tn] : threadTiles) {
        if (m % bm || n % bn || bm % tm || bn % tn)
          continue;
        int64_t threads = (bm / tm) * (bn / tn);
        int64_t blocks = batch * (m / bm) * (n / bn);
        if (isGpu && (threads < 64 || threads > std::min<int64_t>(512, profile.maxThreadsPerBlock)))
          continue;
        if (!isGpu && tm * tn > 64)
          continue;
        double reuse = double(bm * bn) / double(bm + bn); // operand reuse of the block tile
        double regs = double(tm * tn) / double(tm + tn);  // operand reuse in registers
        double fill = isGpu ? std::min(1.0, double(blocks) / (2.0 * profile.multiprocessors))
                            : std::min(1.0, double(blocks) / (4.0 * profile.multiprocessors));
        TileConfig c;
        c.block.assign(rank, 0);
        c.thread.assign(rank, 0);
        for (size_t d = 0; d + 2 < rank; ++d)
          c.block[d] = c.thread[d] = 1;
        c.block[rank - 2] = bm;
        c.block[rank - 1] = bn;
        c.thread[rank - 2] = tm;
        c.thread[rank - 1] = tn;
        c.k = isGpu ? 4 : 8;
        // Measurements: docs/perf/heuristic.md (contractionConfigs).
        double prior = !isGpu ? 1.0 : (threads == 64 && tm * tn == 64) ? 2.5 : threads == 256 ? 1.1 : 1.0;
        c.merit = reuse * regs * fill * prior;
        configs.push_back(c);
      }
  std::stable_sort(configs.begin(), configs.end(),
                   [](const TileConfig &a, const TileConfig &b) { return a.merit > b.merit; });
  return configs;
}

/// Other roots (elementwise chains, row reductions): GPU blocks of rows with a thread per row segment of
/// 1-8 elements (a whole row per thread when the payload reduces rows, so no thread recomputes a
/// reduction); CPU tiles of rows.
std::vector<TileConfig> rowConfigs(const PayloadFacts &facts, const HardwareProfile &profile) {
  size_t rank = facts.parallelSizes.size();
  std::vector<TileConfig> configs;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    rows *= facts.parallelSizes[d];
  int64_t cols = facts.parallelSizes[rank - 1];
  // Convolutions (and poolings) reduce over their own windows, not over rows of their output: none of the row
  // rules below fits them, or the elementwise epilogue after them.
  bool windows = facts.reductionsAreWindows();
  bool reducesRows = facts.reductionOps > 0 && !windows;
  // A GPU grid has 3 dimensions: loops before the last three stay whole, run inside each thread (a 4-D op
  // that kforge-normalize-importer could not collapse).
  size_t firstTiled = rank > 3 ? rank - 3 : 0;
  auto make = [&](int64_t blockRows, int64_t blockCols, int64_t threadRows, int64_t threadCols, double merit) {
    TileConfig c;
    c.block.assign(rank, 0);
    c.thread.assign(rank, 0);
    for (size_t d = firstTiled; d + 1 < rank; ++d)
      c.block[d] = c.thread[d] = 1;
    if (rank >= 2) {
      c.block[rank - 2] = blockRows;
      c.thread[rank - 2] = threadRows;
    }
    c.block[rank - 1] = blockCols;
    c.thread[rank - 1] = threadCols;
    c.merit = merit;
    configs.push_back(c);
  };
  int64_t lastRows = rank >= 2 ? facts.parallelSizes[rank - 2] : 1;
  for (int64_t br : {256, 128, 64, 32}) {
    if (rank < 2 || lastRows % br)
      continue;
    if (reducesRows)
      make(br, 0, 1, 0, double(br) / 256.0); // a whole row per thread
  }
  if (!reducesRows && !windows) {
    // A block that does not divide the row leaves a partial (masked) block at the row's end: ranked by the
    // share of its launched work that is real (1000-wide rows: 1024-wide blocks do 98% useful work, 2048-wide
    // ones 49%).
    for (int64_t v : {4, 2, 8, 1})
      for (int64_t threadsX : {256, 128, 512}) {
        int64_t bc = v * threadsX;
        if (bc > cols)
          continue;
        double useful = double(cols) / double((cols + bc - 1) / bc * bc);
        double merit = useful * useful;
        if (rank >= 2)
          make(1, bc, 1, v, merit * (v == 4 ? 2.0 : 1.0) * (threadsX == 256 ? 1.1 : 1.0));
        else
          make(0, bc, 0, v, merit);
      }
  }
  // Columns are reduced where a statistic is read whole along outer loops only, or where the root's own
  // reduction runs across its input's rows (torch.sum over a middle dimension).
  bool reducesColumns =
      reducesRows && rank >= 2 &&
      ((!facts.wholeDims.empty() && !llvm::is_contained(facts.wholeDims, static_cast<int64_t>(rank - 1))) ||
       facts.reductionInnermost == 0);
  if (reducesColumns) {
    // The reduction runs along an outer loop (an RMS norm over NCHW's channels: the statistic of each (n, h*w)
    // is read whole along C): a thread per column, consecutive threads on consecutive columns, so every read
    // of the reduced loop is coalesced; the whole loops stay untiled (each thread walks them), the others
    // take one per block. Ranked as the elementwise blocks by the share of a partial block's work that is
    // real.
    for (int64_t threadsX : {256, 128, 512, 64}) {
      TileConfig c;
      c.block.assign(rank, 0);
      c.thread.assign(rank, 0);
      int64_t tiled = 1;
      for (size_t d = rank - 1; d-- > 0;)
        if (!llvm::is_contained(facts.wholeDims, static_cast<int64_t>(d)) && tiled < 3) {
          c.block[d] = c.thread[d] = 1;
          ++tiled;
        }
      c.block[rank - 1] = std::min(threadsX, cols);
      c.thread[rank - 1] = 1;
      double useful = double(cols) / double((cols + c.block[rank - 1] - 1) / c.block[rank - 1] * c.block[rank - 1]);
      c.merit = useful * useful * (threadsX == 256 ? 1.1 : 1.0);
      configs.push_back(c);
    }
  }
  if (reducesRows && rank == 1) {
    // The root is the reduction itself (a row sum): a thread per output row.
    for (int64_t br : {256, 128, 64, 32})
      if (facts.parallelSizes[0] % br == 0) {
        TileConfig c;
        c.block = {br};
        c.thread = {1};
        c.merit = double(br) / 256.0;
        configs.push_back(c);
      }
  }
  if ((configs.empty() || windows) && rank >= 3) {
    // Convolution-like roots: the innermost three loops tiled (a GPU grid has 3 dims), up to 4 x 4 x 32 outputs
    // per block and one per thread, an extent up to its cap taken whole; the outer loops run inside each thread
    // (kforge-normalize-importer orders a window op's loops as its output's dimensions, so the innermost is
    // the output's contiguous one, on the threads' x). Where every reduction is a window,
    // the innermost (contiguous) loop takes 32 even where 32 does not divide it, its last tile partial (masked),
    // unless a divisor of at least 16 exists: an output width of 1028 (4 x 257) gets 32-wide blocks, not 4-wide.
    TileConfig c;
    c.block.assign(rank, 0);
    c.thread.assign(rank, 0);
    int64_t caps[3] = {4, 4, 32};
    for (int i = 0; i < 3; ++i) {
      size_t d = rank - 3 + i;
      int64_t extent = facts.parallelSizes[d], size = 1;
      for (int64_t candidate : {32, 16, 8, 4, 2, 1})
        if (candidate <= caps[i] && extent % candidate == 0) {
          size = candidate;
          break;
        }
      if (extent <= caps[i])
        size = extent; // taken whole: a 28-wide output row is one tile of 28, not seven of 4
      if (i == 2 && size < 16 && extent >= caps[i] && windows)
        size = caps[i];
      c.block[d] = size;
      c.thread[d] = 1;
    }
    c.merit = 1;
    configs.push_back(c);
  }
  (void)rows;
  (void)profile;
  std::stable_sort(configs.begin(), configs.end(),
                   [](const TileConfig &a, const TileConfig &b) { return a.merit > b.merit; });
  return configs;
}

} // namespace kforge::tune::search
