//===- Nodes.h - the interpreter's tensors, evaluated element by element -*- C++ -*-===//

#ifndef KFORGE_LIB_INTERPRET_NODES_H
#define KFORGE_LIB_INTERPRET_NODES_H

#include "ScalarOps.h"

#include "kforge/Interpret/Interpreter.h"

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/SmallVector.h"

#include <unordered_map>

namespace kforge::interpret {

/// A tensor of the payload whose elements are computed when read.
class Node {
public:
  Node(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape) : interp(interp), shape(shape) {}
  virtual ~Node() = default;

  /// The element at `index` (one coordinate per dimension, inside the shape); NaN once the interpreter has
  /// failed.
  virtual double at(const int64_t *index) = 0;

  bool contains(const int64_t *index) const {
    for (size_t d = 0; d < shape.size(); ++d)
      if (index[d] < 0 || index[d] >= shape[d])
        return false;
    return true;
  }
  int64_t linearize(const int64_t *index) const {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      flat = flat * shape[d] + index[d];
    return flat;
  }
  void delinearize(int64_t flat, int64_t *index) const {
    for (size_t d = shape.size(); d-- > 0;) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
  }

  PayloadInterpreter &interp;
  llvm::SmallVector<int64_t> shape;
};

/// A function argument: the caller's elements, block by block (the last block read kept at hand).
class ArgumentNode : public Node {
public:
  ArgumentNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, ArgumentSource &source, unsigned argument)
      : Node(interp, shape), source(source), argument(argument), bits(source.blockBits()) {}
  double at(const int64_t *index) override {
    int64_t flat = linearize(index), block = flat >> bits;
    if (block != currentBlock) {
      current = source.block(argument, block);
      currentBlock = block;
    }
    return current[flat & ((int64_t(1) << bits) - 1)];
  }

private:
  ArgumentSource &source;
  unsigned argument, bits;
  int64_t currentBlock = -1;
  const float *current = nullptr;
};

/// arith.constant of a tensor type: a splat, dense elements, or a resource blob.
class ConstantNode : public Node {
public:
  ConstantNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape) : Node(interp, shape) {}
  /// Fails with the reason when the attribute's elements cannot be read.
  bool init(mlir::ElementsAttr attr, std::string &why);
  double at(const int64_t *index) override;

private:
  double readRaw(int64_t flat) const;
  bool splat = false;
  double splatValue = 0;
  const char *raw = nullptr;
  mlir::Type elementType;
  unsigned bytes = 0;
  std::vector<double> values; ///< Elements converted once (i1, f16, bf16, ...).
};

/// tensor.empty: reading an element is an error (the payload would read an uninitialised value).
class EmptyNode : public Node {
public:
  using Node::Node;
  double at(const int64_t *) override;
};

/// A reshape (expand_shape, collapse_shape, cast): the same elements in row-major order.
class ReshapeNode : public Node {
public:
  ReshapeNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, Node *source)
      : Node(interp, shape), source(source), sourceIndex(source->shape.size()) {}
  double at(const int64_t *index) override {
    source->delinearize(linearize(index), sourceIndex.data());
    return source->at(sourceIndex.data());
  }

private:
  Node *source;
  llvm::SmallVector<int64_t> sourceIndex;
};

/// tensor.extract_slice with static offsets and strides (rank-reducing too).
class ExtractSliceNode : public Node {
public:
  ExtractSliceNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, Node *source,
                   llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> strides, llvm::SmallBitVector dropped)
      : Node(interp, shape), source(source), offsets(offsets), strides(strides), dropped(std::move(dropped)),
        sourceIndex(source->shape.size()) {}
  double at(const int64_t *index) override;

private:
  Node *source;
  llvm::SmallVector<int64_t> offsets, strides;
  llvm::SmallBitVector dropped;
  llvm::SmallVector<int64_t> sourceIndex;
};

/// tensor.insert_slice with static offsets, sizes and strides: the source inside the slice, the destination
/// elsewhere.
class InsertSliceNode : public Node {
public:
  InsertSliceNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, Node *source, Node *dest,
                  llvm::ArrayRef<int64_t> offsets, llvm::ArrayRef<int64_t> sizes, llvm::ArrayRef<int64_t> strides,
                  llvm::SmallBitVector dropped)
      : Node(interp, shape), source(source), dest(dest), offsets(offsets), sizes(sizes), strides(strides),
        dropped(std::move(dropped)), sourceIndex(source->shape.size()) {}
  double at(const int64_t *index) override;

private:
  Node *source, *dest;
  llvm::SmallVector<int64_t> offsets, sizes, strides;
  llvm::SmallBitVector dropped;
  llvm::SmallVector<int64_t> sourceIndex;
};

/// tensor.pad with static low padding and one padding value.
class PadNode : public Node {
public:
  PadNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, Node *source, llvm::ArrayRef<int64_t> low,
          double padding)
      : Node(interp, shape), source(source), low(low), padding(padding), sourceIndex(source->shape.size()) {}
  double at(const int64_t *index) override;

private:
  Node *source;
  llvm::SmallVector<int64_t> low;
  double padding;
  llvm::SmallVector<int64_t> sourceIndex;
};

/// tensor.concat along one dimension.
class ConcatNode : public Node {
public:
  ConcatNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, std::vector<Node *> inputs, int64_t dim)
      : Node(interp, shape), inputs(std::move(inputs)), dim(dim), inputIndex(shape.size()) {}
  double at(const int64_t *index) override;

private:
  std::vector<Node *> inputs;
  int64_t dim;
  llvm::SmallVector<int64_t> inputIndex;
};

/// An indexing map decoded for evaluation: each result a loop dimension, a constant, or a general expression.
struct CompiledMap {
  explicit CompiledMap(mlir::AffineMap map);
  void apply(const int64_t *loop, int64_t *out) const;
  mlir::AffineMap map;
  llvm::SmallVector<int> dims; ///< Per result: the loop dimension, -1 for a constant, -2 for an expression.
  llvm::SmallVector<int64_t> constants;
};

/// A linalg body decoded into instructions over a frame of slots: the block's arguments first, then constants
/// and values from outside the body (preset once), then the results of its operations.
struct Program {
  std::vector<Instr> code;
  std::vector<int> yields;
  std::vector<double> frame; ///< The slots, presets in place.
};

/// A linalg.generic: the element of each result at an output position, by running the body over the loop
/// dimensions the output does not fix (its reductions), in order, from the init's element.
class GenericEval {
public:
  struct Input {
    Node *node;
    CompiledMap map;
    int slot;
    llvm::SmallVector<int64_t> index;
  };
  explicit GenericEval(PayloadInterpreter &interp) : interp(interp) {}
  double value(unsigned result, const int64_t *position);

  PayloadInterpreter &interp;
  Program program;
  std::vector<Input> inputs;         ///< The tensor inputs the body reads.
  std::vector<Node *> inits;         ///< Per result: the init tensor, or null where the body ignores it.
  std::vector<int> initSlots;        ///< Per result: the block argument of its init.
  llvm::SmallVector<int64_t> ranges; ///< The loop's static sizes.
  llvm::SmallVector<int> outputDims; ///< Per output dimension: the loop dimension it fixes, or -1 (a constant).
  llvm::SmallVector<int64_t> outputConstants;
  llvm::SmallVector<int> freeDims; ///< The loop dimensions the output leaves free, outermost first.
  llvm::SmallVector<int64_t> outputShape;

private:
  void run(const int64_t *position);
  llvm::SmallVector<int64_t> loop;
  llvm::SmallVector<double, 2> acc;
  /// Results of the loops with free dimensions, by output position (a softmax row's max and sum serve the
  /// whole row); element-wise results are cheap to recompute and not kept.
  std::unordered_map<int64_t, llvm::SmallVector<double, 2>> memo;
};

class GenericResultNode : public Node {
public:
  GenericResultNode(PayloadInterpreter &interp, llvm::ArrayRef<int64_t> shape, GenericEval &eval, unsigned result)
      : Node(interp, shape), eval(eval), result(result) {}
  double at(const int64_t *index) override { return eval.value(result, index); }

private:
  GenericEval &eval;
  unsigned result;
};

/// Runs `program` once over its frame at the loop position `loop`.
void execute(Program &program, const int64_t *loop, PayloadInterpreter &interp);

} // namespace kforge::interpret

#endif // KFORGE_LIB_INTERPRET_NODES_H
