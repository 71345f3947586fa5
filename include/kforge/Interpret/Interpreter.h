//===- Interpreter.h - a payload's output elements in float64 on the host -*- C++ -*-===//
//
// An independent computation of a payload for problems too large for its CPU build: chosen elements of the
// entry's results, evaluated in float64 straight from the linalg-on-tensors IR (named ops generalized by
// upstream's pass, nothing of kforge's lowering), reading only what each element needs. kforge-tune checks the
// naive GPU reference against a few hundred of these before it trusts it (kforge-compile --sample-outputs;
// docs/runner.md, "The reference is checked").
//
// Values are float64 throughout (integers and i1 too: exact up to 2^53); arith.truncf rounds to its result
// type, as the payload says, and so do the integer truncations. An element that is the result of a loop with
// reduction dimensions is computed once per interpreter and kept (a softmax row's max and sum serve every
// element of the row); element-wise results are recomputed where read.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_INTERPRET_INTERPRETER_H
#define KFORGE_INTERPRET_INTERPRETER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kforge {

namespace interpret {
class Node;
class GenericEval;
} // namespace interpret

/// Where the interpreter reads the function's arguments: row-major elements as floats (integer arguments hold
/// their values), in blocks of 2^blockBits() elements, each asked for when first read, so that a caller can
/// produce only the blocks an evaluation reads (kforge-run's inputs are drawn block by block).
class ArgumentSource {
public:
  virtual ~ArgumentSource() = default;
  virtual unsigned blockBits() const = 0;
  /// The elements of block `block` of argument `argument` (the last block may be shorter); safe to call from
  /// several threads, and valid while the source lives.
  virtual const float *block(unsigned argument, int64_t block) = 0;
};

class PayloadInterpreter {
public:
  /// Prepares `func` for evaluation, its arguments read from `arguments` (which must outlive the
  /// interpreter). Fails with a message naming the first op (and its location) the interpreter cannot evaluate.
  static std::unique_ptr<PayloadInterpreter> create(mlir::func::FuncOp func, ArgumentSource &arguments,
                                                    std::string &error);
  ~PayloadInterpreter();

  /// The element of result `result` at row-major position `flat`, or nullopt with `error` set (an element read
  /// from an uninitialised tensor, an index outside a tensor, or the deadline passed).
  std::optional<double> evaluate(unsigned result, int64_t flat, std::string &error);

  /// Evaluation stops with an error once this time has passed (checked every few thousand loop iterations).
  void setDeadline(std::chrono::steady_clock::time_point when) { deadline = when; }

  /// Loop iterations (body evaluations) run so far.
  int64_t iterations() const { return counted; }

  // Used by the nodes while evaluating.
  bool tick();
  void fail(std::string why);
  bool failed() const { return !failure.empty(); }

private:
  PayloadInterpreter() = default;
  friend class InterpreterBuilder;
  std::vector<std::unique_ptr<interpret::Node>> nodes;
  std::vector<std::unique_ptr<interpret::GenericEval>> generics;
  std::vector<interpret::Node *> results;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int64_t counted = 0;
  std::string failure;
};

/// Generalizes every named linalg op of `module` (upstream's linalg-generalize-named-ops), which the interpreter
/// evaluates as linalg.generic.
mlir::LogicalResult prepareForInterpretation(mlir::ModuleOp module);

} // namespace kforge

#endif // KFORGE_INTERPRET_INTERPRETER_H
