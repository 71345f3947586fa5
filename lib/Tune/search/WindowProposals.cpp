//===- WindowProposals.cpp - direct window ops for the heuristic ----------===//
//
// The heuristic's first schedules for a window op that has no GEMM in it (an NCHW depthwise convolution, a
// pooling), run directly: its batch spread over the threads.
//
//===----------------------------------------------------------------------===//

#include "Search.h"

#include <algorithm>

using namespace kforge::tune;

namespace kforge::tune::search {

/// The largest divisor of `extent` that is at most `cap`.
static int64_t largestDivisor(int64_t extent, int64_t cap) {
  for (int64_t v = std::min(extent, cap); v > 1; --v)
    if (extent % v == 0)
      return v;
  return 1;
}

/// A direct window op over (batch, channels, rows, columns) (an NCHW depthwise convolution or pooling, its loops
/// in the output's order): the ranked configuration tiles the last three loops and leaves the batch to each
/// thread, a chain of dependent iterations (each image's window read, then its sum stored) with nothing in
/// flight beside it. Here the batch goes over the threads' z instead (tn images a thread, up to 64 z threads),
/// a row segment of the columns on x (the whole row up to 32, else a divisor from 16), two rows on y, and each
/// thread walks the block's channels (up to 32) itself: independent images per block, the columns coalesced.
/// Then the same with the thread's loops ordered channels, window row, images, window column, each image's
/// input rows read back to back (the best schedule 90 trials of search found, 0.158 ms against 0.183-0.20 for
/// the ranked tiles on a 32x128x56x56 depthwise 3x3; results/conv-h100/s59-call-4, -5).
/// First, whole rows: a block of a few channels by a few rows by the whole row (up to 128 columns, else its
/// largest divisor up to 128), each thread 2 (then 4) adjacent output columns of one row and channel, walking
/// the batch itself. Adjacent outputs share all but one window column, which the thread keeps in registers;
/// whole rows leave no block a ragged or halo-heavy edge along the columns; consecutive threads read
/// consecutive columns. On an H100 (fixed kernels, 3 seeds verified; results/verification-h100/s61-call-1) the
/// 32x128x56x56 depthwise 3x3 took 0.077 ms with 2 columns a thread (0.094 with 4) against 0.148 for the batch
/// over z below and 0.164 for the naive kernel (cuDNN: 0.127 in bench/run's protocol).
static void addWindowRowProposals(int64_t channels, int64_t rows, int64_t cols, AddProposal add) {
  int64_t bw = cols <= 128 ? cols : largestDivisor(cols, 128);
  int64_t bc = largestDivisor(channels, 4), bh = largestDivisor(rows, 4);
  for (int64_t columnsPerThread : {2, 4}) {
    if (bw % columnsPerThread || bw < 16 || bc * bh * (bw / columnsPerThread) > 1024 ||
        bc * bh * (bw / columnsPerThread) < 64)
      continue;
    Schedule v;
    v.push_back(tile("block", {0, bc, bh, bw}));
    v.push_back(fuse("block"));
    v.push_back(tile("thread", {0, 1, 1, columnsPerThread}));
    v.push_back(fuse("thread"));
    v.push_back(Action{"read_only_inputs"});
    add(v, "",
        "heuristic: a window op by whole rows, " + std::to_string(columnsPerThread) +
            " adjacent output columns a thread (their shared window columns in registers), the batch in each "
            "thread");
  }
}

void addWindowBatchProposals(const PayloadFacts &facts, const HardwareProfile &profile, AddProposal add) {
  const std::vector<int64_t> &sizes = facts.parallelSizes;
  if (!gpu(profile) || !facts.reductionsAreWindows() || !facts.implicitGemm.empty() || sizes.size() != 4 ||
      facts.rootLoops != 6)
    return;
  int64_t batch = sizes[0], channels = sizes[1], rows = sizes[2], cols = sizes[3];
  addWindowRowProposals(channels, rows, cols, add);
  int64_t bw = cols <= 32 ? cols : largestDivisor(cols, 32);
  if (batch < 2 || bw < 16)
    return;
  int64_t bh = rows % 2 == 0 ? 2 : 1, bc = largestDivisor(channels, 32);
  int64_t tn = 1;
  while (batch % (tn * 2) == 0 && (batch / tn > 64 || (batch / tn) * bh * bw > 1024))
    tn *= 2;
  if (batch % tn || batch / tn > 64 || (batch / tn) * bh * bw > 1024)
    return;
  Schedule v;
  v.push_back(tile("block", {0, bc, bh, bw}));
  v.push_back(fuse("block"));
  v.push_back(tile("thread", {tn, 0, 1, 1}));
  v.push_back(fuse("thread"));
  v.push_back(Action{"read_only_inputs"});
  Schedule ordered = v;
  Action reorder{"reorder"};
  reorder.sizes = {2, 3, 1, 4, 0, 5}; // rows, columns, channels, window row, images, window column
  ordered.insert(ordered.begin() + 4, reorder);
  ordered.insert(ordered.begin() + 5, intAction("occupancy", 3));
  add(ordered, "",
      "heuristic: a window op's batch over the threads' z, each thread walking its block's channels (images "
      "inside the window rows)");
  add(v, "", "heuristic: a window op's batch over the threads' z, each thread walking its block's channels");
}

} // namespace kforge::tune::search
