//===- ScalarOps.h - the interpreter's scalar instructions ------*- C++ -*-===//
//
// A linalg body, or a scalar op outside one, decoded once into flat instructions over float64 slots, so that
// evaluating a body costs a switch per op instead of a walk over MLIR operations.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_LIB_INTERPRET_SCALAROPS_H
#define KFORGE_LIB_INTERPRET_SCALAROPS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/APFloat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::interpret {

class Node;

enum class Kind : uint8_t {
  // Float.
  AddF,
  SubF,
  MulF,
  DivF,
  RemF,
  MaximumF,
  MinimumF,
  MaxNumF,
  MinNumF,
  PowF,
  Atan2,
  CopySign,
  NegF,
  AbsF,
  Exp,
  Exp2,
  Expm1,
  Log,
  Log2,
  Log10,
  Log1p,
  Sqrt,
  Rsqrt,
  Tanh,
  Sin,
  Cos,
  Tan,
  Atan,
  Asin,
  Acos,
  Sinh,
  Cosh,
  Erf,
  Erfc,
  Floor,
  Ceil,
  Round,
  RoundEven,
  Trunc,
  Cbrt,
  IsNaN,
  IsInf,
  IsFinite,
  Fma,
  FPowI,
  // Integer (values held in their signed interpretation; i1 as 0 or 1).
  AddI,
  SubI,
  MulI,
  DivSI,
  DivUI,
  RemSI,
  RemUI,
  FloorDivSI,
  CeilDivSI,
  MaxSI,
  MinSI,
  MaxUI,
  MinUI,
  AndI,
  OrI,
  XorI,
  ShLI,
  ShRSI,
  ShRUI,
  AbsI,
  // Both.
  CmpF,
  CmpI,
  Select,
  // Conversions.
  Identity,
  TruncF,
  UIToFP,
  FPToSI,
  FPToUI,
  Wrap,
  ExtUI,
  // Leaves.
  Constant,
  Index,
  Extract,
};

/// One instruction: `result` = kind(operands...), all slot numbers of the program's frame.
struct Instr {
  Kind kind;
  int result = -1;
  int operands[3] = {-1, -1, -1};
  int predicate = 0;  ///< CmpF / CmpI: the arith predicate's value.
  unsigned bits = 64; ///< Integer results: the width values wrap to; UIToFP / ExtUI: the source's width.
  const llvm::fltSemantics *semantics = nullptr; ///< TruncF: the type rounded to.
  double constant = 0;                           ///< Constant's value; Index: the loop dimension.
  Node *tensor = nullptr;                        ///< Extract: the tensor read, at the slots in `indices`.
  std::vector<int> indices;
};

/// Decodes `op` (an arith or math op with scalar operands and one result) into `instr`, its kind and
/// attributes only; fails with a reason when the interpreter has no meaning for it.
bool decodeScalarOp(mlir::Operation *op, Instr &instr, std::string &why);

/// Wraps an integer to `bits` bits, in its signed interpretation (i1: 0 or 1).
double wrapInteger(double value, unsigned bits);

/// Executes one decoded instruction (not Constant, Index or Extract) over `slots`.
double applyScalar(const Instr &instr, const double *slots);

} // namespace kforge::interpret

#endif // KFORGE_LIB_INTERPRET_SCALAROPS_H
