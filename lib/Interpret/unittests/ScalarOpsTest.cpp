//===- ScalarOpsTest.cpp - the interpreter's scalar semantics --------------===//
//
// What each arith / math op means in the interpreter's float64 frame: integer wrap-around at the op's width,
// signed against unsigned, NaN rules of maximumf and maxnumf, ordered and unordered compares, and truncf's
// rounding to the narrower type. Decoded from parsed ops, as the interpreter decodes a linalg body.
//
//===----------------------------------------------------------------------===//

#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace kforge::interpret;

namespace {
/// Parses `body` (ops over %a, %b: `type`) and evaluates its last op on (a, b).
class ScalarOpsTest : public ::testing::Test {
protected:
  ScalarOpsTest() { context.loadDialect<arith::ArithDialect, func::FuncDialect, math::MathDialect>(); }
  double eval(const std::string &type, const std::string &op, double a, double b, const std::string &result = "") {
    std::string text = "func.func @f(%a: " + type + ", %b: " + type + ") -> " + (result.empty() ? type : result) +
                       " {\n  %r = " + op + "\n  return %r : " + (result.empty() ? type : result) + "\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return NAN;
    auto func = *module->getOps<func::FuncOp>().begin();
    Operation *last = &*func.getBody().front().begin();
    Instr instr;
    std::string why;
    EXPECT_TRUE(decodeScalarOp(last, instr, why)) << why;
    double slots[2] = {a, b};
    for (auto [k, operand] : llvm::enumerate(last->getOperands()))
      instr.operands[k] = int(cast<BlockArgument>(operand).getArgNumber());
    return applyScalar(instr, slots);
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};
} // namespace

TEST_F(ScalarOpsTest, IntegersWrapAtTheirWidth) {
  EXPECT_EQ(eval("i32", "arith.addi %a, %b : i32", 2147483647, 1), -2147483648.0);
  EXPECT_EQ(eval("i8", "arith.muli %a, %b : i8", 16, 16), 0);
  EXPECT_EQ(eval("i8", "arith.subi %a, %b : i8", -128, 1), 127);
  EXPECT_EQ(eval("i64", "arith.addi %a, %b : i64", 1e15, 1), 1e15 + 1);
  EXPECT_EQ(wrapInteger(3, 1), 1);
  EXPECT_EQ(wrapInteger(-1, 16), -1);
  EXPECT_EQ(wrapInteger(65535, 16), -1);
}

TEST_F(ScalarOpsTest, SignedAndUnsignedDivisionAndShifts) {
  EXPECT_EQ(eval("i32", "arith.divsi %a, %b : i32", -7, 2), -3);
  EXPECT_EQ(eval("i32", "arith.remsi %a, %b : i32", -7, 2), -1);
  EXPECT_EQ(eval("i32", "arith.floordivsi %a, %b : i32", -7, 2), -4);
  EXPECT_EQ(eval("i32", "arith.ceildivsi %a, %b : i32", -7, 2), -3);
  // -1 as i8 is 255 unsigned.
  EXPECT_EQ(eval("i8", "arith.divui %a, %b : i8", -1, 16), 15);
  EXPECT_EQ(eval("i8", "arith.remui %a, %b : i8", -1, 16), 15);
  EXPECT_EQ(eval("i32", "arith.shrsi %a, %b : i32", -8, 1), -4);
  EXPECT_EQ(eval("i8", "arith.shrui %a, %b : i8", -8, 1), 124);
  EXPECT_EQ(eval("i8", "arith.shli %a, %b : i8", 64, 1), -128);
  EXPECT_EQ(eval("i32", "arith.maxui %a, %b : i32", -1, 5), -1);
  EXPECT_EQ(eval("i32", "arith.minsi %a, %b : i32", -1, 5), -1);
}

TEST_F(ScalarOpsTest, ComparesReadTheirOperandsWidth) {
  EXPECT_EQ(eval("i8", "arith.cmpi ult, %a, %b : i8", -1, 1, "i1"), 0); // 255 < 1 is false
  EXPECT_EQ(eval("i8", "arith.cmpi ult, %a, %b : i8", 1, -1, "i1"), 1); // 1 < 255 (not at the result's width)
  EXPECT_EQ(eval("i8", "arith.cmpi slt, %a, %b : i8", -1, 1, "i1"), 1);
  EXPECT_EQ(eval("f32", "arith.cmpf olt, %a, %b : f32", NAN, 1, "i1"), 0);
  EXPECT_EQ(eval("f32", "arith.cmpf ult, %a, %b : f32", NAN, 1, "i1"), 1);
  EXPECT_EQ(eval("f32", "arith.cmpf one, %a, %b : f32", 2, 1, "i1"), 1);
  EXPECT_EQ(eval("f32", "arith.cmpf uno, %a, %b : f32", 2, 1, "i1"), 0);
}

TEST_F(ScalarOpsTest, NaNRulesOfMinimumAndMaxNum) {
  EXPECT_TRUE(std::isnan(eval("f32", "arith.maximumf %a, %b : f32", NAN, 1)));
  EXPECT_EQ(eval("f32", "arith.maxnumf %a, %b : f32", NAN, 1), 1);
  EXPECT_TRUE(std::isnan(eval("f32", "arith.minimumf %a, %b : f32", 1, NAN)));
  EXPECT_EQ(eval("f32", "arith.minnumf %a, %b : f32", 1, NAN), 1);
}

TEST_F(ScalarOpsTest, FloatOpsAreFloat64AndTruncfRounds) {
  // Exact in float64, not in float32: no rounding until a truncf says so.
  EXPECT_EQ(eval("f32", "arith.addf %a, %b : f32", 1.0, 1e-10), 1.0 + 1e-10);
  EXPECT_EQ(eval("f32", "math.powf %a, %b : f32", -2, 3), -8);
  // 1 + 2^-9 rounds to 1 in bf16 (8 bits of mantissa), ties to even; 1 + 3 * 2^-9 to 1 + 2^-7.
  module = parseSourceString<ModuleOp>("func.func @f(%a: f32) -> bf16 {\n  %r = arith.truncf %a : f32 to bf16\n"
                                       "  return %r : bf16\n}\n",
                                       &context);
  ASSERT_TRUE(module);
  Operation *truncate = &*(*module->getOps<func::FuncOp>().begin()).getBody().front().begin();
  Instr instr;
  std::string why;
  ASSERT_TRUE(decodeScalarOp(truncate, instr, why)) << why;
  instr.operands[0] = 0;
  double slot = 1.0 + std::ldexp(1.0, -9);
  EXPECT_EQ(applyScalar(instr, &slot), 1.0);
  slot = 1.0 + 3 * std::ldexp(1.0, -9);
  EXPECT_EQ(applyScalar(instr, &slot), 1.0 + std::ldexp(1.0, -7));
}

TEST_F(ScalarOpsTest, ConversionsReadTheSourceWidth) {
  EXPECT_EQ(eval("i8", "arith.uitofp %a : i8 to f32", -1, 0, "f32"), 255);
  EXPECT_EQ(eval("i8", "arith.sitofp %a : i8 to f32", -1, 0, "f32"), -1);
  EXPECT_EQ(eval("i8", "arith.extui %a : i8 to i32", -1, 0, "i32"), 255);
  EXPECT_EQ(eval("i32", "arith.trunci %a : i32 to i8", 300, 0, "i8"), 44);
  EXPECT_EQ(eval("f32", "arith.fptosi %a : f32 to i32", -2.7, 0, "i32"), -2);
}

TEST_F(ScalarOpsTest, OpsWithoutAMeaningAreRefused) {
  module = parseSourceString<ModuleOp>("func.func @f(%a: i32) -> i32 {\n  %r = math.ctpop %a : i32\n"
                                       "  return %r : i32\n}\n",
                                       &context);
  ASSERT_TRUE(module);
  Instr instr;
  std::string why;
  EXPECT_FALSE(decodeScalarOp(&*(*module->getOps<func::FuncOp>().begin()).getBody().front().begin(), instr, why));
  EXPECT_NE(why.find("no meaning"), std::string::npos);
}
