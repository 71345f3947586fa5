//===- PoliciesTest.cpp - the search policies propose valid, new schedules --===//

#include "kforge/Tune/Policies.h"

#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <set>

using namespace kforge::tune;

namespace {
PayloadFacts gemmBiasRelu() {
  PayloadFacts f;
  f.entry = "gemm_bias_relu";
  f.rootOp = "linalg.generic";
  f.parallelSizes = {4096, 4096};
  f.contractionOp = "linalg.matmul";
  f.contractionK = 4096;
  f.reductionOps = 1;
  f.linalgOps = 4;
  f.elementType = "f32";
  return f;
}
PayloadFacts gemmBiasReluBf16() {
  PayloadFacts f = gemmBiasRelu();
  f.entry = "gemm_bias_relu_bf16";
  f.contractionOperandType = "bf16";
  f.elementType = "bf16";
  return f;
}
PayloadFacts softmax() {
  PayloadFacts f;
  f.entry = "softmax";
  f.rootOp = "linalg.generic";
  f.parallelSizes = {4096, 4096};
  f.reductionOps = 2;
  f.reductionSize = 4096;
  f.linalgOps = 6;
  f.elementType = "f32";
  return f;
}
PayloadFacts gemmSoftmax() {
  PayloadFacts f;
  f.entry = "gemm_softmax";
  f.rootOp = "linalg.generic";
  f.parallelSizes = {4096, 4096};
  f.contractionOp = "linalg.matmul";
  f.contractionK = 4096;
  f.contractionSizes = {4096, 4096};
  f.contractionOps = 2;
  f.reductionOps = 3;
  f.reductionSize = 4096;
  f.linalgOps = 8;
  f.wholeDims = {1};
  f.elementType = "f32";
  return f;
}
PayloadFacts matmulLargeK() {
  PayloadFacts f;
  f.entry = "matmul_large_k";
  f.rootOp = "linalg.matmul";
  f.parallelSizes = {1024, 1024};
  f.contractionOp = "linalg.matmul";
  f.contractionK = 32768;
  f.contractionSizes = {1024, 1024};
  f.contractionOps = 2;
  f.reductionOps = 1;
  f.linalgOps = 2;
  f.elementType = "f32";
  return f;
}
HardwareProfile h200() {
  HardwareProfile p;
  p.target = "gpu";
  p.multiprocessors = 132;
  return p;
}

/// Payload facts from their JSON (as kforge-compile --facts-json writes them); false when it does not parse.
bool factsFromJson(const char *text, PayloadFacts &facts) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return false;
  }
  llvm::json::Path::Root root;
  return fromJSON(*parsed, facts, root);
}

HardwareProfile cpu() {
  HardwareProfile p;
  p.target = "cpu";
  p.multiprocessors = 2;
  return p;
}

/// A history in which every proposal was measured, at a made-up time that favours bigger block tiles.
std::vector<TrialRecord> measure(const std::vector<Proposal> &proposals, int firstId) {
  std::vector<TrialRecord> out;
  for (const Proposal &p : proposals) {
    TrialRecord r;
    r.id = firstId++;
    r.schedule = p.schedule;
    r.hash = scheduleHash(p.schedule);
    r.status = "correct";
    r.timeMs = 100.0 / (1 + p.schedule.size()) + (r.id % 7);
    r.island = p.island;
    out.push_back(r);
  }
  return out;
}

/// `rounds` offspring pairs of `guesses` (a mutation of one, a crossover of two), each expected valid, then
/// passed to `visit`.
template <typename Visit>
void forEachValidOffspring(const std::vector<Proposal> &guesses, const PayloadFacts &facts,
                           const HardwareProfile &profile, std::mt19937_64 &rng, int rounds, Visit visit) {
  for (int i = 0; i < rounds; ++i) {
    const Schedule &a = guesses[i % guesses.size()].schedule, &b = guesses[(i * 7 + 3) % guesses.size()].schedule;
    std::string step;
    Schedule mutated = mutateSchedule(a, facts, profile, rng, i % 2 == 0, step);
    Schedule child = crossoverSchedules(a, b, facts, profile, rng);
    for (const Schedule *s : {&mutated, &child}) {
      if (s->empty())
        continue;
      EXPECT_TRUE(validateSchedule(*s, facts, profile.target).empty()) << step << ": " << describe(*s);
      visit(*s);
    }
  }
}
} // namespace

TEST(Policies, EveryPolicyProposesValidNewSchedules) {
  for (const PayloadFacts &facts : {gemmBiasRelu(), gemmBiasReluBf16(), softmax(), gemmSoftmax(), matmulLargeK()})
    for (const HardwareProfile &profile : {h200(), cpu()})
      for (const char *name : {"random", "heuristic", "evolve", "heuristic+evolve"}) {
        std::string error;
        std::unique_ptr<Policy> policy = createPolicy(name, facts, profile, 7, error);
        ASSERT_TRUE(policy) << error;
        std::vector<TrialRecord> history;
        for (int round = 0; round < 4; ++round) {
          std::vector<Proposal> batch = policy->propose(history, 6);
          for (const Proposal &p : batch) {
            EXPECT_TRUE(validateSchedule(p.schedule, facts, profile.target).empty())
                << name << " on " << facts.entry << "/" << profile.target << ": " << describe(p.schedule);
            for (const TrialRecord &r : history)
              EXPECT_NE(r.hash, scheduleHash(p.schedule)) << name << " proposed a schedule twice";
          }
          std::vector<TrialRecord> measured = measure(batch, static_cast<int>(history.size()));
          history.insert(history.end(), measured.begin(), measured.end());
        }
        if (std::string(name) != "heuristic") // the heuristic may run out of guesses; the others may not
          EXPECT_GE(history.size(), 12u) << name;
      }
}

TEST(Policies, DeterministicGivenSeedAndHistory) {
  for (const char *name : {"random", "evolve", "heuristic+evolve"}) {
    std::string error;
    auto a = createPolicy(name, gemmBiasRelu(), h200(), 42, error);
    auto b = createPolicy(name, gemmBiasRelu(), h200(), 42, error);
    std::vector<TrialRecord> history;
    for (int round = 0; round < 3; ++round) {
      std::vector<Proposal> pa = a->propose(history, 5), pb = b->propose(history, 5);
      ASSERT_EQ(pa.size(), pb.size());
      for (size_t i = 0; i < pa.size(); ++i)
        EXPECT_EQ(scheduleHash(pa[i].schedule), scheduleHash(pb[i].schedule)) << name;
      std::vector<TrialRecord> measured = measure(pa, static_cast<int>(history.size()));
      history.insert(history.end(), measured.begin(), measured.end());
    }
  }
}

TEST(Policies, HeuristicBuildsOneActionAtATimeFromAFullTileOnTheGpu) {
  std::vector<Proposal> guesses = heuristicSchedules(gemmBiasRelu(), h200());
  ASSERT_GE(guesses.size(), 4u);
  // First step: block and thread tiles with their fusions (a block tile alone is one thread per block), and
  // for a contraction the K tile (without it each thread walks the whole K), vectorized (scalar code keeps
  // the accumulators in memory).
  EXPECT_TRUE(findSlot(guesses[0].schedule, "tile", "reduction")) << describe(guesses[0].schedule);
  EXPECT_EQ(guesses[0].schedule.back().kind, "vectorize") << describe(guesses[0].schedule);
  // Then a step at a time, each naming its parent (on the GPU the K loop unrolled under a register cap: two
  // actions, as unrolling alone was measured slower).
  EXPECT_GT(guesses[1].schedule.size(), guesses[0].schedule.size());
  EXPECT_EQ(guesses[1].parentHash, scheduleHash(guesses[0].schedule));
  EXPECT_TRUE(findSlot(guesses[1].schedule, "unroll")) << describe(guesses[1].schedule);
  // On the CPU the first step is the block tile alone.
  std::vector<Proposal> cpuGuesses = heuristicSchedules(gemmBiasRelu(), cpu());
  EXPECT_EQ(cpuGuesses[0].schedule.size(), 2u) << describe(cpuGuesses[0].schedule);
}

TEST(Policies, MutationAndCrossoverStayValid) {
  std::mt19937_64 rng(3);
  PayloadFacts facts = gemmBiasRelu();
  HardwareProfile profile = h200();
  std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
  for (int i = 0; i < 200; ++i) {
    const Schedule &a = guesses[i % guesses.size()].schedule, &b = guesses[(i * 7 + 3) % guesses.size()].schedule;
    std::string step;
    Schedule mutated = mutateSchedule(a, facts, profile, rng, i % 2 == 0, step);
    EXPECT_TRUE(validateSchedule(mutated, facts, profile.target).empty()) << step;
    if (!step.empty())
      EXPECT_NE(scheduleHash(mutated), scheduleHash(a)) << step;
    Schedule child = crossoverSchedules(a, b, facts, profile, rng);
    if (!child.empty())
      EXPECT_TRUE(validateSchedule(child, facts, profile.target).empty()) << describe(child);
  }
}

TEST(Policies, TensorCoreActionsStayValidUnderMutation) {
  // A bf16 matmul: the heuristic starts with mma (and stage, ldmatrix, pipeline); mutation and crossover keep
  // the tensor-core schedules valid (no SIMT matmul actions next to mma, stage only with mma(1), ldmatrix and
  // pipeline only staged, the stages within shared memory), and reach all four actions.
  std::mt19937_64 rng(5);
  PayloadFacts facts = gemmBiasReluBf16();
  HardwareProfile profile = h200();
  std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
  ASSERT_FALSE(guesses.empty());
  EXPECT_TRUE(findSlot(guesses[0].schedule, "mma")) << describe(guesses[0].schedule);
  bool sawMma = false, sawStage = false, sawLdmatrix = false, sawPipeline = false, sawSimt = false;
  for (int i = 0; i < 400; ++i) {
    const Schedule &a = guesses[i % guesses.size()].schedule, &b = guesses[(i * 5 + 1) % guesses.size()].schedule;
    std::string step;
    Schedule mutated = mutateSchedule(a, facts, profile, rng, i % 2 == 0, step);
    EXPECT_TRUE(validateSchedule(mutated, facts, profile.target).empty()) << step << ": " << describe(mutated);
    Schedule child = crossoverSchedules(a, b, facts, profile, rng);
    if (!child.empty())
      EXPECT_TRUE(validateSchedule(child, facts, profile.target).empty()) << describe(child);
    for (const Schedule *s : {&mutated, &child}) {
      sawMma |= findSlot(*s, "mma") != nullptr;
      sawStage |= findSlot(*s, "stage") != nullptr;
      sawLdmatrix |= findSlot(*s, "ldmatrix") != nullptr;
      sawPipeline |= findSlot(*s, "pipeline") != nullptr;
      sawSimt |= !s->empty() && !findSlot(*s, "mma");
    }
  }
  EXPECT_TRUE(sawMma && sawStage && sawLdmatrix && sawPipeline && sawSimt);
  // The heuristic proposes pipeline only on staged tiles, and wgmma (valid) on pipelined ones.
  bool proposedWgmma = false;
  for (const Proposal &p : guesses) {
    if (findSlot(p.schedule, "pipeline"))
      EXPECT_TRUE(findSlot(p.schedule, "stage")) << describe(p.schedule);
    if (findSlot(p.schedule, "wgmma")) {
      proposedWgmma = true;
      EXPECT_TRUE(findSlot(p.schedule, "pipeline")) << describe(p.schedule);
      EXPECT_TRUE(validateSchedule(p.schedule, facts, profile.target).empty()) << describe(p.schedule);
    }
  }
  EXPECT_TRUE(proposedWgmma);
  // wgmma only where it exists: on an sm_90 GPU (or one whose chip is unknown), not on an sm_80 one.
  HardwareProfile ampere = profile, hopper = profile;
  ampere.chip = "sm_80";
  hopper.chip = "sm_90";
  auto anyWgmma = [&](const HardwareProfile &on) {
    for (const Proposal &p : heuristicSchedules(facts, on))
      if (findSlot(p.schedule, "wgmma"))
        return true;
    return false;
  };
  EXPECT_FALSE(anyWgmma(ampere));
  EXPECT_TRUE(anyWgmma(hopper));
  // An fp32 matmul never gets them.
  for (const Proposal &p : heuristicSchedules(gemmBiasRelu(), profile))
    EXPECT_FALSE(findSlot(p.schedule, "mma")) << describe(p.schedule);
}

TEST(Policies, UnknownPolicyIsAnError) {
  std::string error;
  EXPECT_FALSE(createPolicy("annealing", gemmBiasRelu(), h200(), 1, error));
  EXPECT_NE(error.find("unknown policy 'annealing'"), std::string::npos);
}

TEST(Policies, LaunchBoundsAreReachableOnTheGpuOnly) {
  // The heuristic proposes launch bounds for a contraction on the GPU (measured lever, shared/TOOLCHAIN.md):
  // with a fused epilogue, max_registers(128) (occupancy(2) when its first-ranked block has 256 threads).
  bool heuristicBounds = false;
  for (const Proposal &p : heuristicSchedules(gemmBiasRelu(), h200()))
    heuristicBounds |= findSlot(p.schedule, "max_registers") != nullptr;
  EXPECT_TRUE(heuristicBounds);
  // Mutation adds, changes and removes launch bounds on the GPU, never on the CPU.
  std::mt19937_64 rng(5);
  std::set<std::string> seenGpu;
  for (const HardwareProfile &profile : {h200(), cpu()}) {
    std::vector<Proposal> guesses = heuristicSchedules(gemmBiasRelu(), profile);
    for (int i = 0; i < 400; ++i) {
      std::string step;
      Schedule mutated = mutateSchedule(guesses[i % guesses.size()].schedule, gemmBiasRelu(), profile, rng,
                                        i % 2 == 0, step);
      bool bounded = findSlot(mutated, "occupancy") || findSlot(mutated, "max_registers");
      if (profile.target == "cpu")
        EXPECT_FALSE(bounded) << step;
      else if (bounded)
        for (const Action &a : mutated)
          if (a.kind == "occupancy" || a.kind == "max_registers")
            seenGpu.insert(describe(a));
    }
  }
  EXPECT_GE(seenGpu.size(), 3u) << "launch bounds were rarely reached by mutation";
}

TEST(Policies, ReorderIsProposedAndReachedByMutationOnScalarTiles) {
  // A matmul root (3 loops: two parallel, then K): the heuristic's last rule moves K outside the last parallel
  // loop; mutation adds other orders and removes them; every result validates.
  PayloadFacts mm = gemmBiasRelu();
  mm.entry = "mm";
  mm.rootOp = "linalg.matmul";
  mm.linalgOps = 2;
  mm.rootLoops = 3;
  mm.contractionSizes = {4096, 4096};
  mm.contractionOps = 2;
  Schedule reordered;
  std::vector<Proposal> guesses = heuristicSchedules(mm, cpu());
  for (const Proposal &p : guesses)
    if (const Action *reorder = findSlot(p.schedule, "reorder"); reorder && reorder->sizes == std::vector<int64_t>{0, 2, 1})
      reordered = p.schedule;
  ASSERT_FALSE(reordered.empty());
  std::mt19937_64 rng(7);
  bool added = false, removed = false;
  for (int i = 0; i < 600; ++i) {
    std::string step;
    const Schedule &parent = i % 2 ? reordered : guesses[i % guesses.size()].schedule;
    Schedule mutated = mutateSchedule(parent, mm, cpu(), rng, i % 4 == 0, step);
    EXPECT_TRUE(validateSchedule(mutated, mm, "cpu").empty()) << describe(mutated);
    added |= llvm::StringRef(step).starts_with("add reorder");
    removed |= step == "remove reorder";
  }
  EXPECT_TRUE(added);
  EXPECT_TRUE(removed);
}

TEST(Policies, ContiguousCopiesAreProposedAndMutatedOnImplicitGemms) {
  // An NCHW convolution with a bias and a ReLU (test/Tune/Inputs/conv-nchw-bias-relu.mlir's facts, as
  // kforge-compile --facts-json writes them): the heuristic proposes the cp.async copy orders, and mutation adds
  // contiguous_copies, flips its parameter and removes it (alone, or with pipeline or stage); every result
  // validates.
  PayloadFacts conv;
  ASSERT_TRUE(factsFromJson(R"({"allow_tf32": false, "bytes": 91264, "contraction_a_transposed": false,
    "contraction_b_transposed": false, "contraction_k": 0, "contraction_op": "",
    "contraction_operand_type": "", "contraction_ops": 0, "contraction_result_type": "",
    "contraction_sizes": [], "contractions_after_reductions": 0, "convolutions_before_windows": 0,
    "element_type": "f32", "entry": "conv_bias_relu", "flops": 2375680, "implicit_gemm": "nmnnkkk",
    "implicit_gemm_k": 72, "implicit_gemm_reads": true, "implicit_gemm_type": "f32", "linalg_ops": 3,
    "multi_result_reductions": 0, "nested_reductions": 0, "parallel_sizes": [2, 32, 16, 16],
    "reduction_innermost": -1, "reduction_ops": 1, "reduction_size": 8, "root_loops": 4,
    "root_op": "linalg.generic", "root_reshapes": 0, "row_intermediates": 1, "row_moments": 0,
    "structural_hash": "conv", "whole_dims": [], "window_ops": 1})",
                            conv));
  std::vector<Proposal> guesses = heuristicSchedules(conv, h200());
  Schedule contiguous;
  for (const Proposal &p : guesses)
    if (findSlot(p.schedule, "contiguous_copies"))
      contiguous = p.schedule;
  ASSERT_FALSE(contiguous.empty());
  std::mt19937_64 rng(11);
  bool added = false, removed = false, flipped = false;
  for (int i = 0; i < 800; ++i) {
    std::string step;
    const Schedule &parent = i % 2 ? contiguous : guesses[i % guesses.size()].schedule;
    Schedule mutated = mutateSchedule(parent, conv, h200(), rng, i % 4 == 0, step);
    EXPECT_TRUE(validateSchedule(mutated, conv, "gpu").empty()) << describe(mutated) << " (" << step << ")";
    added |= llvm::StringRef(step).starts_with("add contiguous_copies");
    removed |= step == "remove contiguous_copies";
    const Action *before = findSlot(parent, "contiguous_copies"), *after = findSlot(mutated, "contiguous_copies");
    flipped |= before && after && before->value != after->value;
  }
  EXPECT_TRUE(added);
  EXPECT_TRUE(removed);
  EXPECT_TRUE(flipped);
}

TEST(Policies, TensorCoreImplicitGemmsAreProposedAndMutated) {
  // A 3x3 NHWC convolution of bf16 accumulated in f32 (test/Tune/Inputs/conv-nhwc-bf16-f32acc.mlir's facts, as
  // kforge-compile --facts-json writes them): the heuristic proposes its tensor-core implicit GEMM first (wgmma,
  // then mma.sync), three stages before two, every proposal valid; mutation keeps mma's schedules valid, adds and
  // removes pipeline (3 or 4 stages, never 2) and wgmma, and never takes stage away.
  PayloadFacts conv;
  ASSERT_TRUE(factsFromJson(R"({"allow_tf32": false, "bytes": 135168, "contraction_a_transposed": false,
    "contraction_b_transposed": false, "contraction_k": 0, "contraction_op": "", "contraction_operand_type": "",
    "contraction_ops": 0, "contraction_result_type": "", "contraction_sizes": [], "contractions_after_reductions": 0,
    "convolutions_before_windows": 0, "element_type": "bf16", "entry": "conv_nhwc_bf16", "flops": 18874368,
    "implicit_gemm": "mmmnkkk", "implicit_gemm_k": 288, "implicit_gemm_mma_type": "bf16",
    "implicit_gemm_reads": false, "implicit_gemm_type": "f32", "implicit_gemm_vector_copies": true,
    "linalg_ops": 3, "multi_result_reductions": 0, "nested_reductions": 0, "parallel_sizes": [2, 16, 16, 64],
    "reduction_innermost": -1, "reduction_ops": 1, "reduction_size": 32, "root_loops": 4,
    "root_op": "linalg.generic", "root_reshapes": 0, "row_intermediates": 1, "row_moments": 0,
    "structural_hash": "conv-bf16", "whole_dims": [], "window_ops": 1})",
                            conv));
  std::vector<Proposal> guesses = heuristicSchedules(conv, h200());
  ASSERT_GE(guesses.size(), 2u);
  // On Hopper, wgmma's first (3 stages, then 4 with and without overlap); then mma.sync's, three stages before
  // two.
  EXPECT_TRUE(findSlot(guesses[0].schedule, "wgmma") && findSlot(guesses[0].schedule, "pipeline"))
      << describe(guesses[0].schedule);
  auto sync = llvm::find_if(
      guesses, [](const Proposal &p) { return findSlot(p.schedule, "mma") && !findSlot(p.schedule, "wgmma"); });
  ASSERT_TRUE(sync != guesses.end() && sync + 1 != guesses.end());
  EXPECT_TRUE(findSlot(sync->schedule, "pipeline")) << describe(sync->schedule);
  EXPECT_TRUE(findSlot((sync + 1)->schedule, "mma") && !findSlot((sync + 1)->schedule, "pipeline"))
      << describe((sync + 1)->schedule);
  std::vector<Schedule> tensorCores;
  for (const Proposal &p : guesses) {
    EXPECT_TRUE(validateSchedule(p.schedule, conv, "gpu").empty()) << describe(p.schedule);
    if (findSlot(p.schedule, "mma"))
      tensorCores.push_back(p.schedule);
  }
  ASSERT_FALSE(tensorCores.empty());
  std::mt19937_64 rng(5);
  bool added = false, removed = false, wgmmaRemoved = false;
  for (int i = 0; i < 400; ++i) {
    std::string step;
    const Schedule &parent = tensorCores[i % tensorCores.size()];
    Schedule mutated = mutateSchedule(parent, conv, h200(), rng, i % 4 == 0, step);
    EXPECT_TRUE(validateSchedule(mutated, conv, "gpu").empty()) << describe(mutated) << " (" << step << ")";
    if (findSlot(mutated, "mma"))
      EXPECT_TRUE(findSlot(mutated, "stage")) << describe(mutated) << " (" << step << ")";
    if (const Action *pipeline = findSlot(mutated, "pipeline"))
      EXPECT_GE(pipeline->value, 3) << describe(mutated);
    added |= llvm::StringRef(step).starts_with("add pipeline");
    removed |= step == "remove pipeline";
    wgmmaRemoved |= step == "remove wgmma";
  }
  EXPECT_TRUE(added);
  EXPECT_TRUE(removed);
  EXPECT_TRUE(wgmmaRemoved);
}

TEST(Policies, LaneVectorsAndRowPrefetchesAreProposedAndMutatedOnRowKernels) {
  // The heuristic proposes rows over lanes of 4 consecutive columns for a 4096-wide softmax, valid, with 16
  // values per lane (256 lanes) first among them.
  std::vector<int64_t> vectorLanes;
  for (const Proposal &p : heuristicSchedules(softmax(), h200()))
    if (const Action *vector = findSlot(p.schedule, "lane_vector")) {
      EXPECT_EQ(vector->value, 4);
      EXPECT_TRUE(validateSchedule(p.schedule, softmax(), "gpu").empty()) << describe(p.schedule);
      vectorLanes.push_back(findSlot(p.schedule, "lanes")->value);
    }
  ASSERT_FALSE(vectorLanes.empty());
  EXPECT_EQ(vectorLanes.front(), 256);
  // The first of them also with the next wave's rows prefetched: 132 multiprocessors x 5 blocks of 256 lanes
  // (16 values + 32 registers each); with loads_evict_last, also two rows per multiprocessor ahead.
  bool prefetched = false;
  for (const Proposal &p : heuristicSchedules(softmax(), h200()))
    if (const Action *prefetch = findSlot(p.schedule, "prefetch_rows")) {
      prefetched = true;
      EXPECT_EQ(prefetch->value, findSlot(p.schedule, "loads_evict_last") && prefetch->value != 132 * 5 ? 132 * 2
                                                                                                         : 132 * 5);
      EXPECT_TRUE(validateSchedule(p.schedule, softmax(), "gpu").empty()) << describe(p.schedule);
    }
  EXPECT_TRUE(prefetched);
  // Mutation adds and removes lane_vector on schedules with lanes, and never leaves it without lanes.
  std::mt19937_64 rng(11);
  bool added = false, removed = false;
  std::vector<Proposal> guesses = heuristicSchedules(softmax(), h200());
  for (int i = 0; i < 600; ++i) {
    const Schedule &parent = guesses[i % guesses.size()].schedule;
    std::string step;
    Schedule mutated = mutateSchedule(parent, softmax(), h200(), rng, i % 2 == 0, step);
    if (findSlot(mutated, "lane_vector") || findSlot(mutated, "prefetch_rows"))
      EXPECT_NE(findSlot(mutated, "lanes"), nullptr) << step;
    added |= !findSlot(parent, "lane_vector") && findSlot(mutated, "lane_vector");
    removed |= findSlot(parent, "lane_vector") && !findSlot(mutated, "lane_vector");
  }
  EXPECT_TRUE(added);
  EXPECT_TRUE(removed);
}

TEST(Policies, CacheActionsAreProposedOnNormalisingRowKernelsAndReachedByTheSearch) {
  // The heuristic proposes streaming_stores, then streaming_stores with read_only_inputs or with
  // loads_evict_last, on softmax's first lane_vector form (valid, last in order), the last also with the prefetch
  // two rows per multiprocessor ahead, and loads_evict_last alone without a prefetch; a row sum, whose output is
  // small, gets loads_evict_first alone, on each of its three lane_vector forms.
  static const llvm::StringRef kinds[] = {"streaming_stores", "read_only_inputs", "loads_evict_last",
                                          "loads_evict_first"};
  auto cacheActions = [](const Schedule &s) {
    std::vector<std::string> found;
    for (llvm::StringRef kind : kinds)
      if (findSlot(s, kind))
        found.push_back(kind.str());
    return found;
  };
  std::vector<std::string> steps;
  std::vector<Schedule> cached;
  for (const Proposal &p : heuristicSchedules(softmax(), h200()))
    if (!cacheActions(p.schedule).empty()) {
      cached.push_back(p.schedule);
      EXPECT_TRUE(validateSchedule(p.schedule, softmax(), "gpu").empty()) << describe(p.schedule);
      EXPECT_EQ(p.schedule.back().kind, cacheActions(p.schedule).back());
      EXPECT_FALSE(findSlot(p.schedule, "loads_evict_first")) << describe(p.schedule);
      steps.push_back(p.step);
    }
  ASSERT_EQ(steps.size(), 5u);
  EXPECT_NE(steps[0].find("add streaming_stores"), std::string::npos);
  EXPECT_NE(steps[1].find("add read_only_inputs"), std::string::npos);
  EXPECT_NE(steps[2].find("add loads_evict_last"), std::string::npos);
  EXPECT_NE(steps[3].find("add prefetch_rows(264), streaming_stores and loads_evict_last"), std::string::npos);
  EXPECT_NE(steps[4].find("add loads_evict_last without a prefetch"), std::string::npos);
  EXPECT_FALSE(findSlot(cached[4], "prefetch_rows")) << describe(cached[4]);
  EXPECT_TRUE(findSlot(cached[3], "prefetch_rows")) << describe(cached[3]);
  PayloadFacts rowSum = softmax();
  rowSum.entry = "row_sum";
  rowSum.parallelSizes = {8192};
  rowSum.reductionSize = 8192;
  rowSum.reductionOps = 1;
  rowSum.linalgOps = 2;
  int evictFirst = 0;
  for (const Proposal &p : heuristicSchedules(rowSum, h200())) {
    std::vector<std::string> found = cacheActions(p.schedule);
    EXPECT_TRUE(found.empty() || found == std::vector<std::string>{"loads_evict_first"}) << describe(p.schedule);
    if (!found.empty()) {
      EXPECT_TRUE(validateSchedule(p.schedule, rowSum, "gpu").empty()) << describe(p.schedule);
      ++evictFirst;
    }
  }
  EXPECT_EQ(evictFirst, 3);
  // Mutation adds and removes each on GPU schedules with a grid (softmax's and the row sum's), and crossover
  // keeps them valid (never both L2 policies); never on the CPU.
  std::mt19937_64 rng(17);
  std::set<std::string> added, removed;
  const std::pair<HardwareProfile, PayloadFacts> cases[] = {
      {h200(), softmax()}, {h200(), rowSum}, {cpu(), gemmBiasRelu()}};
  for (const auto &[profile, facts] : cases) {
    std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
    for (int i = 0; i < 2000; ++i) {
      const Schedule &parent = guesses[i % guesses.size()].schedule;
      std::string step;
      Schedule mutated = mutateSchedule(parent, facts, profile, rng, i % 2 == 0, step);
      Schedule crossed = crossoverSchedules(parent, guesses[(i * 7 + 3) % guesses.size()].schedule, facts, profile, rng);
      if (!crossed.empty())
        EXPECT_TRUE(validateSchedule(crossed, facts, profile.target).empty()) << describe(crossed);
      EXPECT_FALSE(findSlot(mutated, "loads_evict_last") && findSlot(mutated, "loads_evict_first")) << step;
      for (llvm::StringRef kind : kinds) {
        if (profile.target == "cpu") {
          EXPECT_FALSE(findSlot(mutated, kind)) << step;
          continue;
        }
        if (!findSlot(parent, kind) && findSlot(mutated, kind))
          added.insert(kind.str());
        if (findSlot(parent, kind) && !findSlot(mutated, kind))
          removed.insert(kind.str());
      }
    }
  }
  EXPECT_EQ(added.size(), 4u);
  EXPECT_EQ(removed.size(), 4u);
}

TEST(Actions, ActionAtLineTracesLaunchBoundsRenderedAfterTheFinish) {
  // Actions 0 and 1 start at lines 5 and 9, the finish at 30, action 2 (a launch bound) at 40.
  std::vector<int> lines = {5, 9, 40, 30};
  EXPECT_EQ(actionAtLine(lines, 3, 3), -1); // the preamble
  EXPECT_EQ(actionAtLine(lines, 7, 3), 0);
  EXPECT_EQ(actionAtLine(lines, 29, 3), 1);
  EXPECT_EQ(actionAtLine(lines, 35, 3), -1); // the finish
  EXPECT_EQ(actionAtLine(lines, 41, 3), 2);
}

// gemm + softmax on the GPU: the heuristic's first guesses split the contraction from the row kernel, and the
// evolutionary operators keep split schedules valid (the contraction's actions checked against its loops).
TEST(Policies, SplitSchedulesForContractionsBehindRowReductions) {
  PayloadFacts facts = gemmSoftmax();
  std::vector<Proposal> guesses = heuristicSchedules(facts, h200());
  ASSERT_FALSE(guesses.empty());
  EXPECT_EQ(guesses.front().schedule.front().kind, "split");
  EXPECT_EQ(guesses.front().schedule.front().value, 256); // 16 values per lane of a 4096-wide row
  std::mt19937_64 rng(3);
  int splits = 0, mutated = 0, crossed = 0;
  for (int i = 0; i < 200; ++i) {
    Schedule s = randomSchedule(facts, h200(), rng);
    if (!s.empty()) {
      EXPECT_TRUE(validateSchedule(s, facts, "gpu").empty()) << describe(s);
      splits += s.front().kind == "split";
    }
    std::string step;
    Schedule m = mutateSchedule(guesses.front().schedule, facts, h200(), rng, i % 2 == 0, step);
    EXPECT_TRUE(validateSchedule(m, facts, "gpu").empty()) << describe(m);
    EXPECT_EQ(m.front().kind, "split") << describe(m);
    mutated += !step.empty();
    Schedule c = crossoverSchedules(guesses.front().schedule, guesses[i % guesses.size()].schedule, facts, h200(), rng);
    if (!c.empty()) {
      EXPECT_TRUE(validateSchedule(c, facts, "gpu").empty()) << describe(c);
      ++crossed;
    }
  }
  // (A random schedule whose blocks have fewer threads than a warp is drawn again; about half the draws for the
  // unsplit root find none in 200 tries, the split ones nearly always one.)
  EXPECT_GT(splits, 50);
  // (Fewer than before the validator rejected block tiles run by one thread: a mutation that removes
  // tile(thread) now yields such a schedule and is retried.)
  EXPECT_GT(mutated, 150);
  EXPECT_GT(crossed, 150);
  // Not on the CPU (split is a GPU action), nor for a softmax without a contraction.
  for (const Proposal &p : heuristicSchedules(facts, cpu()))
    EXPECT_NE(p.schedule.front().kind, "split");
  for (const Proposal &p : heuristicSchedules(softmax(), h200()))
    EXPECT_NE(p.schedule.front().kind, "split");
}

// A 1024^2 output with K = 32768 on 132 SMs: split_k leads the heuristic's guesses, and the evolutionary
// operators keep split_k schedules valid (the partial matmul's actions checked against (parts, M, N)).
TEST(Policies, SplitKSchedulesForMatmulsWithFewOutputTiles) {
  PayloadFacts facts = matmulLargeK();
  HardwareProfile profile = h200();
  profile.multiprocessors = 132;
  std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
  ASSERT_FALSE(guesses.empty());
  EXPECT_EQ(guesses.front().schedule.front().kind, "split_k");
  std::mt19937_64 rng(5);
  int mutated = 0;
  for (int i = 0; i < 200; ++i) {
    std::string step;
    Schedule m = mutateSchedule(guesses.front().schedule, facts, profile, rng, i % 2 == 0, step);
    EXPECT_TRUE(validateSchedule(m, facts, "gpu").empty()) << describe(m);
    mutated += !step.empty();
    Schedule r = randomSchedule(facts, profile, rng);
    if (!r.empty())
      EXPECT_TRUE(validateSchedule(r, facts, "gpu").empty()) << describe(r);
  }
  EXPECT_GT(mutated, 150);
}

TEST(Policies, ABatchOfOneSearchesAsHardAsAFullBatch) {
  // A run's last batch is often a single trial. It must not give up sooner than a full batch would: with the
  // draws scaled by the batch, study-5's softmax search stopped at 999 of 1000 trials ("the policy has nothing
  // new to try") though new schedules remained. In a small space (an 8x8 elementwise op on the CPU) searched
  // until nothing new is left, whenever a batch of 16 finds something new, a batch of one finds the same first
  // schedule.
  PayloadFacts tiny;
  tiny.entry = "relu";
  tiny.rootOp = "linalg.generic";
  tiny.parallelSizes = {8, 8};
  tiny.linalgOps = 1;
  tiny.elementType = "f32";
  for (const char *name : {"random", "evolve"}) {
    std::string error;
    std::unique_ptr<Policy> policy = createPolicy(name, tiny, cpu(), 3, error);
    ASSERT_TRUE(policy) << error;
    std::vector<TrialRecord> history;
    int checked = 0;
    for (int round = 0; round < 100; ++round) {
      std::vector<Proposal> full = policy->propose(history, 16), one = policy->propose(history, 1);
      if (full.empty())
        break;
      ASSERT_EQ(one.size(), 1u) << name << " after " << history.size() << " trials";
      EXPECT_EQ(scheduleHash(one[0].schedule), scheduleHash(full[0].schedule)) << name;
      ++checked;
      std::vector<TrialRecord> measured = measure(full, static_cast<int>(history.size()));
      history.insert(history.end(), measured.begin(), measured.end());
    }
    EXPECT_GT(checked, 0) << name;
  }
}

TEST(Policies, WarpSpecializedFormsAreProposedAndStayValidUnderMutation) {
  // A bf16 gemm on Hopper: the heuristic's first schedule is the warp-specialized TMA form with its result
  // through shared memory (measured fastest on an H100), and it also proposes persistent. Mutation and crossover
  // keep both valid (warp_specialize only with tma, persistent only with warp_specialize and without
  // stage_epilogue) and reach schedules with and without each.
  std::mt19937_64 rng(11);
  PayloadFacts facts = gemmBiasReluBf16();
  HardwareProfile profile = h200();
  std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
  ASSERT_FALSE(guesses.empty());
  EXPECT_TRUE(findSlot(guesses[0].schedule, "warp_specialize") && findSlot(guesses[0].schedule, "stage_epilogue"))
      << describe(guesses[0].schedule);
  bool proposedPersistent = false;
  for (const Proposal &p : guesses)
    if (const Action *persistent = findSlot(p.schedule, "persistent")) {
      proposedPersistent = true;
      EXPECT_EQ(persistent->value, profile.multiprocessors) << describe(p.schedule);
    }
  EXPECT_TRUE(proposedPersistent);
  // (multicast, the pairs of blocks sharing an operand's tile: proposed after the measured forms.)
  EXPECT_TRUE(llvm::any_of(guesses, [](const Proposal &p) { return findSlot(p.schedule, "multicast"); }));
  int withWarpSpecialize = 0, withoutWarpSpecialize = 0, withPersistent = 0, withMulticast = 0;
  forEachValidOffspring(guesses, facts, profile, rng, 400, [&](const Schedule &s) {
    if (findSlot(s, "warp_specialize")) {
      ++withWarpSpecialize;
      EXPECT_TRUE(findSlot(s, "tma")) << describe(s);
    } else if (findSlot(s, "wgmma")) {
      ++withoutWarpSpecialize;
    }
    if (findSlot(s, "persistent")) {
      ++withPersistent;
      EXPECT_TRUE(findSlot(s, "warp_specialize") && !findSlot(s, "stage_epilogue")) << describe(s);
    }
    if (findSlot(s, "multicast")) {
      ++withMulticast;
      EXPECT_TRUE(findSlot(s, "warp_specialize") && !findSlot(s, "persistent")) << describe(s);
    }
  });
  EXPECT_GT(withWarpSpecialize, 0);
  EXPECT_GT(withoutWarpSpecialize, 0);
  EXPECT_GT(withPersistent, 0);
  EXPECT_GT(withMulticast, 0);
}

TEST(Policies, TransposeBLeadsTf32OnAPlainMatmulAndOnlyThere) {
  // A plain fp32 A @ B (B an argument, K x N): with TF32 allowed the heuristic's first proposals read B as it
  // lies (swap_ab: 0.96-0.97x cuBLAS TF32 at 4096^3 on an H100, session 67), the next ones copy B N x K
  // (transpose_b) for the TF32 wgmma forms, and mutation and crossover keep them valid; without TF32 no
  // proposal and no random schedule copies B (the copy only pays for TF32's wgmma).
  PayloadFacts facts = matmulLargeK();
  facts.parallelSizes = facts.contractionSizes = {4096, 4096};
  facts.contractionK = 4096;
  facts.contractionOperandType = facts.contractionResultType = "f32";
  facts.contractionBFromArgument = true;
  HardwareProfile profile = h200();
  std::mt19937_64 rng(5);
  for (const Proposal &p : heuristicSchedules(facts, profile))
    EXPECT_FALSE(findSlot(p.schedule, "transpose_b")) << describe(p.schedule);
  for (int i = 0; i < 200; ++i)
    EXPECT_FALSE(findSlot(randomSchedule(facts, profile, rng), "transpose_b"));
  facts.allowTf32 = true;
  std::vector<Proposal> guesses = heuristicSchedules(facts, profile);
  ASSERT_FALSE(guesses.empty());
  EXPECT_TRUE(findSlot(guesses[0].schedule, "swap_ab") && findSlot(guesses[0].schedule, "tf32"))
      << describe(guesses[0].schedule);
  auto firstCopy = llvm::find_if(guesses, [](const Proposal &p) { return findSlot(p.schedule, "transpose_b"); });
  ASSERT_NE(firstCopy, guesses.end());
  EXPECT_EQ(firstCopy->schedule.front().kind, "transpose_b");
  EXPECT_TRUE(findSlot(firstCopy->schedule, "wgmma") && findSlot(firstCopy->schedule, "tf32"));
  int copied = 0;
  forEachValidOffspring(guesses, facts, profile, rng, 200,
                        [&](const Schedule &s) { copied += findSlot(s, "transpose_b") != nullptr; });
  EXPECT_GT(copied, 0);
  // A Linear (B already N x K) is never copied.
  facts.contractionBTransposed = true;
  for (const Proposal &p : heuristicSchedules(facts, profile))
    EXPECT_FALSE(findSlot(p.schedule, "transpose_b")) << describe(p.schedule);
}

// A gemm whose dimensions are primes (4093 x 4099 x 4091): no power of two divides a loop, so before partial tiles
// reached the search's own operators its random schedules all had 1x1 blocks (one thread each: 4.6 s a run on an
// H100 where the staged kernel took 3.2 ms) and a mutation of the staged 128 x 128 block could only go to 1.
// Random schedules now have at least a warp per block, and mutations move the block tile to partial sizes.
TEST(Policies, PrimeGemmsGetPartialTilesAndBlocksOfAWarp) {
  PayloadFacts facts = gemmBiasRelu();
  facts.entry = "matmul_prime";
  facts.rootOp = "linalg.matmul";
  facts.parallelSizes = {4093, 4099};
  facts.contractionSizes = {4093, 4099};
  facts.contractionK = 4091;
  facts.contractionOperandType = "f32";
  facts.reductionOps = 0;
  facts.linalgOps = 2;
  std::mt19937_64 rng(11);
  int drawn = 0, partial = 0;
  for (int i = 0; i < 100; ++i) {
    Schedule s = randomSchedule(facts, h200(), rng);
    if (s.empty())
      continue;
    ++drawn;
    EXPECT_TRUE(validateSchedule(s, facts, "gpu").empty()) << describe(s);
    int64_t threads = 1;
    for (int64_t d : blockDims(s, facts))
      threads *= d;
    EXPECT_GE(threads, 32) << describe(s);
    const Action *block = nullptr;
    for (const Action &a : s)
      if (a.kind == "tile" && a.level == "block")
        block = &a;
    partial +=
        block && ((block->sizes[0] > 1 && 4093 % block->sizes[0]) || (block->sizes[1] > 1 && 4099 % block->sizes[1]));
  }
  EXPECT_GT(drawn, 50);
  EXPECT_GT(partial, 50);
  std::vector<Proposal> guesses = heuristicSchedules(facts, h200());
  ASSERT_FALSE(guesses.empty());
  EXPECT_EQ(describe(guesses.front().schedule).rfind("tile(block, 128x128)", 0), 0u)
      << describe(guesses.front().schedule);
  std::set<std::string> blocks;
  for (int i = 0; i < 200; ++i) {
    std::string step;
    Schedule m = mutateSchedule(guesses.front().schedule, facts, h200(), rng, i % 2 == 0, step);
    EXPECT_TRUE(validateSchedule(m, facts, "gpu").empty()) << describe(m);
    for (const Action &a : m)
      if (a.kind == "tile" && a.level == "block")
        blocks.insert(std::to_string(a.sizes[0]) + "x" + std::to_string(a.sizes[1]));
  }
  EXPECT_TRUE(blocks.count("64x128") || blocks.count("128x64")) << blocks.size();
  EXPECT_TRUE(blocks.count("256x128") || blocks.count("128x256")) << blocks.size();
}
