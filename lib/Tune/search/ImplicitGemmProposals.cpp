//===- ImplicitGemmProposals.cpp - the heuristic's implicit-GEMM schedules --===//
//
// stage on an fp32 convolution (PayloadFacts::implicitGemm): its implicit GEMM's block and thread tiles, the
// tiles by cp.async first, for the payloads whose root is (or reads) such a convolution.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <optional>

using namespace kforge::tune;

namespace kforge::tune::search {

/// The block sizes of one side's loops for a side of about `target` elements (sizes[d] = 0 leaves loop d whole):
/// from the innermost, whole loops while they fit; then the largest divisor of the next loop between half the
/// room left and all of it, else the largest power of two that leaves at least 85% of its last tile in the loop
/// (190 in 128: 64, three tiles, 99% of them used), else the room; the loops outside it by 1.
static void implicitGemmSide(const PayloadFacts &facts, const std::vector<int64_t> &loops, int64_t target,
                             std::vector<int64_t> &block) {
  int64_t room = target;
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    int64_t extent = facts.parallelSizes[*it];
    if (extent <= room) {
      block[*it] = 0;
      room = std::max<int64_t>(1, room / extent);
      continue;
    }
    int64_t size = 0;
    for (int64_t s = room; s >= std::max<int64_t>(1, room / 2) && !size; --s)
      if (extent % s == 0)
        size = s;
    for (int64_t p = static_cast<int64_t>(llvm::bit_floor(static_cast<uint64_t>(room))); p >= 4 && !size; p /= 2)
      if (double(extent) / double(llvm::divideCeil(extent, p) * p) >= 0.85)
        size = p;
    block[*it] = size ? size : room;
    room = 1;
  }
}

/// The block sizes of a block of about bm x bn of the GEMM's rows and columns (loops of neither side by 1).
static std::vector<int64_t> implicitGemmBlock(const PayloadFacts &facts, const std::vector<int64_t> &mLoops,
                                              const std::vector<int64_t> &nLoops, int64_t bm, int64_t bn) {
  std::vector<int64_t> block(facts.parallelSizes.size(), 1);
  implicitGemmSide(facts, mLoops, bm, block);
  implicitGemmSide(facts, nLoops, bn, block);
  return block;
}

/// Each loop's extent in a block (a loop the block takes whole, size 0, is its size).
static std::vector<int64_t> blockExtents(const PayloadFacts &facts, const std::vector<int64_t> &block) {
  std::vector<int64_t> extents(block.size());
  for (size_t d = 0; d < block.size(); ++d)
    extents[d] = block[d] == 0 ? facts.parallelSizes[d] : block[d];
  return extents;
}

/// Each thread's share along one side's loops (thread[d], 0 where the loop has one position): `want` elements
/// from the innermost loop outwards, as much of each loop as is left (a share need not divide its loop: the
/// implicit GEMM pads its grid).
static void implicitGemmShare(const std::vector<int64_t> &loops, const std::vector<int64_t> &extents, int64_t want,
                              std::vector<int64_t> &thread) {
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    int64_t t = std::max<int64_t>(1, std::min(want, extents[*it]));
    thread[*it] = extents[*it] == 1 ? 0 : t;
    want = std::max<int64_t>(1, want / t);
  }
}

/// An fp32 convolution as its implicit GEMM (stage on a convolution root: transform.kforge.implicit_gemm_to_simt_
/// staged): blocks of about 128 x 128 (or 64 x 128, 128 x 64, 64 x 256, 64 x 64) of the GEMM's rows (the
/// output points or the filters, whichever side the output's innermost loop is not on) and columns
/// (implicitGemmSide), 8 x 8 (or 8 x 16, 4 x 4) per thread in strided groups of 4, 16 of K per staged tile (8 when 16
/// does not divide K and 8 does). Loops read by both sides (a group) are tiled by 1. A GPU grid has 3 dims:
/// beyond 3 tiled loops, the outermost ones tiled by 1 are walked serially by each block.
/// The implicit GEMM's row (M) and column (N) loops.
static std::pair<std::vector<int64_t>, std::vector<int64_t>> gemmSides(const PayloadFacts &facts) {
  std::vector<int64_t> mLoops, nLoops;
  for (size_t d = 0; d < facts.parallelSizes.size() && d < facts.implicitGemm.size(); ++d) {
    if (facts.implicitGemm[d] == 'm')
      mLoops.push_back(static_cast<int64_t>(d));
    if (facts.implicitGemm[d] == 'n')
      nLoops.push_back(static_cast<int64_t>(d));
  }
  return {mLoops, nLoops};
}

/// Beyond 3 tiled loops, the outermost tiled by 1 are walked serially (block and thread tiles leave them whole):
/// a GPU grid has 3 dims.
static void serialBeyondThreeLoops(std::vector<int64_t> &block) {
  auto tiled = [&] { return llvm::count_if(block, [](int64_t b) { return b != 0; }); };
  for (size_t d = 0; d < block.size() && tiled() > 3; ++d)
    if (block[d] == 1)
      block[d] = 0;
}

/// The block's rows and columns of the implicit GEMM: the products of its M and N loops' extents.
static std::pair<int64_t, int64_t> gemmTile(const std::vector<int64_t> &extents, const std::vector<int64_t> &mLoops,
                                            const std::vector<int64_t> &nLoops) {
  int64_t m = 1, n = 1;
  for (int64_t d : mLoops)
    m *= extents[d];
  for (int64_t d : nLoops)
    n *= extents[d];
  return {m, n};
}

/// A bf16/f16 convolution accumulating in f32 as its implicit GEMM on tensor cores (mma then stage:
/// transform.kforge.implicit_gemm_to_mma_sync): blocks of about 128 x 128 (or 128 x 64, 64 x 128, 64 x 64) of
/// the GEMM's rows and columns, a 2 x 2 grid of warps (4 x 2 on 128 x 128: 64 x 64 a warp at most; fewer where
/// a warp would get under 32 rows or columns), 32 of K per staged tile (16 when K is at most 16); three stages
/// first where every copy can be a 16-byte cp.async (PayloadFacts::implicitGemmVectorCopies), then two.
static void addImplicitGemmMmaProposals(const PayloadFacts &facts, AddProposal add) {
  size_t rank = facts.parallelSizes.size();
  auto [mLoops, nLoops] = gemmSides(facts);
  int64_t blockK = facts.implicitGemmK > 16 ? 32 : 16;
  const std::pair<int64_t, int64_t> targets[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}};
  for (auto [bm, bn] : targets) {
    int64_t warpRows = bm == 128 && bn == 128 ? 4 : 2, warpCols = 2;
    std::vector<int64_t> block = implicitGemmBlock(facts, mLoops, nLoops, bm, bn), thread(rank, 0);
    std::vector<int64_t> extents = blockExtents(facts, block);
    auto [m, n] = gemmTile(extents, mLoops, nLoops);
    // At least 32 rows and columns a warp where the block has them (16 is one instruction tile; below, the
    // padding to whole tiles is wasted work).
    while (warpRows > 1 && m / warpRows < 32)
      warpRows /= 2;
    while (warpCols > 1 && n / warpCols < 32)
      warpCols /= 2;
    implicitGemmShare(mLoops, extents, llvm::divideCeil(m, warpRows), thread);
    implicitGemmShare(nLoops, extents, llvm::divideCeil(n, warpCols), thread);
    serialBeyondThreeLoops(block);
    // Where every copy can be a 16-byte cp.async, 3 stages first (the tiles' copies two tiles ahead of the
    // warps), then 2.
    for (int64_t stages : {3, 2}) {
      if (stages > 2 && !facts.implicitGemmVectorCopies)
        continue;
      Schedule v;
      v.push_back(tile("block", block));
      v.push_back(tile("thread", thread));
      v.push_back(intAction("mma", 1));
      v.push_back(intAction("stage", blockK));
      if (stages > 2)
        v.push_back(intAction("pipeline", stages));
      add(v, "",
          "heuristic: the convolution as its implicit GEMM on tensor cores (mma.sync), " + std::to_string(bm) + "x" +
              std::to_string(bn) + " a block, " + std::to_string(blockK) + " of K per staged tile, " +
              std::to_string(stages) + " stages");
    }
  }
}

/// The same on Hopper's warpgroup MMA (mma, stage(64), wgmma: 128-byte swizzled stages of 64 of K), first on
/// sm_90: blocks of about 128 x 128, 128 x 256, 64 x 256 and 64 x 128, a warpgroup (4 warps) per 64 rows of the
/// block. Where every copy is a 16-byte cp.async, one warpgroup column (each warpgroup all the block's columns,
/// at most 256) and 4 or 3 stages; where copies go element by element through registers (an NCHW input),
/// two warpgroup columns on 128 columns or more (each thread's share of a tile held in registers halves) and
/// two stages; each also with one tile's wgmma in flight (overlap: with 4 stages, the copies then 2 tiles ahead).
/// (H100, session 57 call 2, fixed kernels: 3 stages fastest on the NHWC task, 0.037 ms against 0.042 with 4;
/// overlap within 3% either way.) A block whose rows or columns the padding would leave under 3/4 used is
/// skipped.
static void addImplicitGemmWgmmaProposals(const PayloadFacts &facts, AddProposal add, bool tf32 = false) {
  // (A stage row is 128 bytes of K: 64 16-bit elements, or 32 f32 multiplied as TF32.)
  int64_t blockK = tf32 ? 32 : 64;
  if (facts.implicitGemmK < blockK)
    return;
  size_t rank = facts.parallelSizes.size();
  auto [mLoops, nLoops] = gemmSides(facts);
  const std::pair<int64_t, int64_t> targets[] = {{128, 128}, {128, 256}, {64, 256}, {64, 128}};
  for (auto [bm, bn] : targets) {
    std::vector<int64_t> block = implicitGemmBlock(facts, mLoops, nLoops, bm, bn), thread(rank, 0);
    std::vector<int64_t> extents = blockExtents(facts, block);
    auto [m, n] = gemmTile(extents, mLoops, nLoops);
    int64_t rows = llvm::divideCeil(m, 64);
    int64_t cols = !facts.implicitGemmVectorCopies && n >= 128 ? 2 : 1;
    int64_t columns = static_cast<int64_t>(llvm::alignTo(n, 64 * cols));
    if (rows > 4 || columns / cols > 256 || 4 * m < 3 * 64 * rows || 4 * n < 3 * columns)
      continue;
    implicitGemmShare(mLoops, extents, llvm::divideCeil(m, 4 * rows), thread);
    implicitGemmShare(nLoops, extents, llvm::divideCeil(n, cols), thread);
    serialBeyondThreeLoops(block);
    int64_t warps = 1;
    for (size_t d = 0; d < rank; ++d)
      if (thread[d] > 0)
        warps *= llvm::divideCeil(extents[d], thread[d]);
    if (warps != 4 * rows * cols) // (the loops' extents do not split into these warps)
      continue;
    for (auto [stages, overlap] : {std::pair{3, false}, {4, true}, {4, false}, {2, false}, {2, true}}) {
      if ((stages > 2) != facts.implicitGemmVectorCopies || stages * (64 * rows + columns) * 128 > 227 * 1024)
        continue;
      Schedule v;
      v.push_back(tile("block", block));
      v.push_back(tile("thread", thread));
      v.push_back(intAction("mma", 1));
      v.push_back(intAction("stage", blockK));
      if (stages > 2)
        v.push_back(intAction("pipeline", stages));
      v.push_back(Action{"wgmma"});
      if (overlap)
        v.push_back(Action{"overlap"});
      if (tf32)
        v.push_back(Action{"tf32"});
      add(v, "",
          "heuristic: the convolution as its implicit GEMM on Hopper's warpgroup MMA" +
              std::string(tf32 ? " in TF32 (allowed by the request)" : "") + ", " + std::to_string(bm) + "x" +
              std::to_string(bn) + " a block, " + std::to_string(rows * cols) + " warpgroups, " +
              std::to_string(stages) + " stages of " + std::to_string(blockK) + " of K" +
              (overlap ? ", one tile's wgmma in flight" : ""));
    }
  }
}

/// The fp32 convolution's implicit GEMM on the staged SIMT path (stage on a convolution root:
/// transform.kforge.implicit_gemm_to_simt_staged).
static void addImplicitGemmSimtProposals(const PayloadFacts &facts, AddProposal add) {
  size_t rank = facts.parallelSizes.size();
  auto [mLoops, nLoops] = gemmSides(facts);
  int64_t k = facts.implicitGemmK;
  int64_t blockK = k % 16 == 0 || k % 8 ? 16 : 8;
  if (k < blockK)
    blockK = k / 4 * 4;
  if (blockK < 4)
    return;
  const std::pair<int64_t, int64_t> targets[] = {{128, 128}, {64, 128}, {128, 64}, {64, 256}, {64, 64}};
  // Each thread's share of the block's tile, rows x columns: 8 x 8, then 8 x 16 (twice the columns, the side of
  // the output's contiguous loop: 128 accumulators, the most a staged thread holds without spilling, and half
  // the threads; on the H100 the 7x7 stride-2 stem's search found 8 x 16 at 0.391 ms where its best 8 x 8 ran
  // 0.440, sessions 65 and 67), then 4 x 4.
  const std::pair<int64_t, int64_t> shares[] = {{8, 8}, {8, 16}, {4, 4}};
  for (auto [bm, bn] : targets)
    for (auto [rowShare, colShare] : shares) {
      bool wide = colShare != rowShare;
      std::vector<int64_t> block = implicitGemmBlock(facts, mLoops, nLoops, bm, bn), thread(rank, 0);
      std::vector<int64_t> extents = blockExtents(facts, block);
      implicitGemmShare(mLoops, extents, rowShare, thread);
      implicitGemmShare(nLoops, extents, colShare, thread);
      serialBeyondThreeLoops(block);
      int64_t threads = 1;
      for (size_t d = 0; d < rank; ++d)
        if (thread[d] > 0)
          threads *= llvm::divideCeil(block[d] == 0 ? facts.parallelSizes[d] : block[d], thread[d]);
      if (threads < 64 || threads > 512)
        continue;
      // Its tiles by cp.async first where they are element reads (no staging registers held across the
      // multiply), then through registers. The cp.async copies three ways with 8 x 8 a thread (the faster
      // share): 4 consecutive K positions a thread, then one element a thread along each side's contiguous
      // loop, K's longest loop innermost and in the op's order (H100, session 55, fixed schedules: which is
      // fastest depends on the convolution: K positions on NCHW 3x3s, contiguous on NHWC, contiguous with the
      // channels innermost on a stride-2 3x3, 0.716 -> 0.539 ms).
      enum class Copies { Registers, KGroups, ContiguousLongestK, Contiguous };
      std::vector<Copies> forms = {Copies::KGroups};
      if (wide)
        forms = {Copies::ContiguousLongestK, Copies::KGroups};
      else if (rowShare == 8)
        forms.insert(forms.end(), {Copies::ContiguousLongestK, Copies::Contiguous});
      if (!wide)
        forms.push_back(Copies::Registers);
      for (Copies form : forms) {
        bool async = form != Copies::Registers;
        if (async && !facts.implicitGemmReads)
          continue;
        Schedule v;
        v.push_back(tile("block", block));
        v.push_back(tile("thread", thread));
        v.push_back(intAction("stage", blockK));
        if (async)
          v.push_back(intAction("pipeline", 2));
        if (form == Copies::ContiguousLongestK || form == Copies::Contiguous)
          v.push_back(intAction("contiguous_copies", form == Copies::ContiguousLongestK ? 1 : 0));
        const char *how = form == Copies::KGroups              ? ", copied by cp.async"
                          : form == Copies::ContiguousLongestK ? ", copied by cp.async along each side's "
                                                                 "contiguous loop, K's longest loop innermost"
                          : form == Copies::Contiguous         ? ", copied by cp.async along each side's "
                                                                 "contiguous loop, K in the op's order"
                                                               : "";
        add(v, "",
            "heuristic: the convolution as its implicit GEMM, " + std::to_string(rowShare) + "x" +
                std::to_string(colShare) + " per thread, " + std::to_string(blockK) + " of K per staged tile" + how);
      }
    }
}

void addImplicitGemmProposals(const PayloadFacts &facts, const HardwareProfile &profile, AddProposal add) {
  if (!gpu(profile) || !stageIsImplicitGemm(facts))
    return;
  // (wgmma only on Hopper, sm_90; an unknown chip gets it too, as the matmul's proposals do.)
  bool hopper = profile.chip.empty() || llvm::StringRef(profile.chip).starts_with("sm_90");
  // Where an operand's channels are not innermost (NCHW, FCHW) and channels-last copies of the operands would let
  // the tiles be copied along K in 16-byte groups (channels_last): an NCHW convolution on tensor cores copies its
  // tiles element by element, which bounded it at 0.47-0.61x cuDNN (session 57, H100), against 0.88x on NHWC;
  // the fp32 SIMT implicit GEMM reached 77% of cuBLAS's rate on NHWC and 26-65% on NCHW (session 54). The gain
  // on the copies is estimated from those measurements, not yet measured itself: the first four schedules on
  // the copies go first on tensor cores (the rest of them after the layout's own), and after the first four of the
  // layout as it is on the SIMT path.
  bool copies = facts.channelsLastVectorCopies && !facts.implicitGemmVectorCopies;
  Action copy{"channels_last"};
  PayloadFacts copied = scheduledFacts({copy}, facts);
  using Proposals = std::vector<std::pair<Schedule, std::string>>;
  auto collect = [](Proposals &into, std::optional<Action> first) {
    return [&into, first](Schedule v, std::string, std::string why) {
      if (first) {
        v.insert(v.begin(), *first);
        why += ", on channels-last copies of its operands";
      }
      into.push_back({std::move(v), std::move(why)});
      return std::string();
    };
  };
  Proposals plain, onCopies;
  auto both = [&](auto &&propose) {
    propose(facts, collect(plain, std::nullopt));
    if (copies)
      propose(copied, collect(onCopies, copy));
  };
  if (!facts.implicitGemmMmaType.empty()) {
    if (hopper)
      both([](const PayloadFacts &f, AddProposal a) { addImplicitGemmWgmmaProposals(f, a); });
    both([](const PayloadFacts &f, AddProposal a) { addImplicitGemmMmaProposals(f, a); });
  }
  // An fp32 convolution the request allows TF32 for, on Hopper: TF32 wgmma (both multiplicands contiguous along
  // K: NHWC and FHWC as they are, else on channels-last copies) before everything else, as the tensor cores'
  // rate is several times the SIMT path's.
  Proposals tf32;
  if (hopper && facts.allowTf32 && facts.implicitGemmType == "f32") {
    if (facts.implicitGemmKMajor)
      addImplicitGemmWgmmaProposals(facts, collect(tf32, std::nullopt), /*tf32=*/true);
    else if (facts.channelsLastKMajor && !facts.channelsLastMultiplicands.empty())
      addImplicitGemmWgmmaProposals(copied, collect(tf32, copy), /*tf32=*/true);
  }
  size_t tensorCore = plain.size(), tensorCoreOnCopies = onCopies.size();
  if (facts.implicitGemmType == "f32")
    both([](const PayloadFacts &f, AddProposal a) { addImplicitGemmSimtProposals(f, a); });
  // TF32; tensor cores: 4 on the copies, the layout's own, the rest on the copies; then SIMT: 4 of the layout's own,
  // 4 on the copies (its first block's forms), the rest of the layout's own.
  auto emit = [&](const Proposals &from, size_t begin, size_t end) {
    for (size_t i = begin; i < std::min(end, from.size()); ++i)
      add(from[i].first, "", from[i].second);
  };
  emit(tf32, 0, tf32.size());
  size_t firstCopies = std::min<size_t>(4, tensorCoreOnCopies);
  emit(onCopies, 0, firstCopies);
  emit(plain, 0, tensorCore);
  emit(onCopies, firstCopies, tensorCoreOnCopies);
  emit(plain, tensorCore, tensorCore + 4);
  emit(onCopies, tensorCoreOnCopies, tensorCoreOnCopies + 4);
  emit(plain, tensorCore + 4, plain.size());
}

} // namespace kforge::tune::search
