//===- ScalarOps.cpp - the interpreter's scalar instructions ---------------===//

#include "ScalarOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace kforge::interpret;

/// The bit width of `type`'s elements (index: 64).
static unsigned widthOf(Type type) {
  if (type.isIndex())
    return 64;
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 64;
}

bool kforge::interpret::decodeScalarOp(Operation *op, Instr &instr, std::string &why) {
  if (op->getNumResults() != 1 || !op->getResult(0).getType().isIntOrIndexOrFloat()) {
    why = "it does not produce one scalar";
    return false;
  }
  for (Value operand : op->getOperands())
    if (!operand.getType().isIntOrIndexOrFloat()) {
      why = "an operand is not a scalar";
      return false;
    }
  Type resultType = op->getResult(0).getType();
  instr.bits = widthOf(resultType);
  auto kind = [&](Kind k) { return std::optional<Kind>(k); };
  std::optional<Kind> decoded = llvm::TypeSwitch<Operation *, std::optional<Kind>>(op)
                                    .Case([&](arith::AddFOp) { return kind(Kind::AddF); })
                                    .Case([&](arith::SubFOp) { return kind(Kind::SubF); })
                                    .Case([&](arith::MulFOp) { return kind(Kind::MulF); })
                                    .Case([&](arith::DivFOp) { return kind(Kind::DivF); })
                                    .Case([&](arith::RemFOp) { return kind(Kind::RemF); })
                                    .Case([&](arith::MaximumFOp) { return kind(Kind::MaximumF); })
                                    .Case([&](arith::MinimumFOp) { return kind(Kind::MinimumF); })
                                    .Case([&](arith::MaxNumFOp) { return kind(Kind::MaxNumF); })
                                    .Case([&](arith::MinNumFOp) { return kind(Kind::MinNumF); })
                                    .Case([&](arith::NegFOp) { return kind(Kind::NegF); })
                                    .Case([&](math::PowFOp) { return kind(Kind::PowF); })
                                    .Case([&](math::Atan2Op) { return kind(Kind::Atan2); })
                                    .Case([&](math::CopySignOp) { return kind(Kind::CopySign); })
                                    .Case([&](math::AbsFOp) { return kind(Kind::AbsF); })
                                    .Case([&](math::ExpOp) { return kind(Kind::Exp); })
                                    .Case([&](math::Exp2Op) { return kind(Kind::Exp2); })
                                    .Case([&](math::ExpM1Op) { return kind(Kind::Expm1); })
                                    .Case([&](math::LogOp) { return kind(Kind::Log); })
                                    .Case([&](math::Log2Op) { return kind(Kind::Log2); })
                                    .Case([&](math::Log10Op) { return kind(Kind::Log10); })
                                    .Case([&](math::Log1pOp) { return kind(Kind::Log1p); })
                                    .Case([&](math::SqrtOp) { return kind(Kind::Sqrt); })
                                    .Case([&](math::RsqrtOp) { return kind(Kind::Rsqrt); })
                                    .Case([&](math::TanhOp) { return kind(Kind::Tanh); })
                                    .Case([&](math::SinOp) { return kind(Kind::Sin); })
                                    .Case([&](math::CosOp) { return kind(Kind::Cos); })
                                    .Case([&](math::TanOp) { return kind(Kind::Tan); })
                                    .Case([&](math::AtanOp) { return kind(Kind::Atan); })
                                    .Case([&](math::AsinOp) { return kind(Kind::Asin); })
                                    .Case([&](math::AcosOp) { return kind(Kind::Acos); })
                                    .Case([&](math::SinhOp) { return kind(Kind::Sinh); })
                                    .Case([&](math::CoshOp) { return kind(Kind::Cosh); })
                                    .Case([&](math::ErfOp) { return kind(Kind::Erf); })
                                    .Case([&](math::ErfcOp) { return kind(Kind::Erfc); })
                                    .Case([&](math::FloorOp) { return kind(Kind::Floor); })
                                    .Case([&](math::CeilOp) { return kind(Kind::Ceil); })
                                    .Case([&](math::RoundOp) { return kind(Kind::Round); })
                                    .Case([&](math::RoundEvenOp) { return kind(Kind::RoundEven); })
                                    .Case([&](math::TruncOp) { return kind(Kind::Trunc); })
                                    .Case([&](math::CbrtOp) { return kind(Kind::Cbrt); })
                                    .Case([&](math::IsNaNOp) { return kind(Kind::IsNaN); })
                                    .Case([&](math::IsInfOp) { return kind(Kind::IsInf); })
                                    .Case([&](math::IsFiniteOp) { return kind(Kind::IsFinite); })
                                    .Case([&](math::FmaOp) { return kind(Kind::Fma); })
                                    .Case([&](math::FPowIOp) { return kind(Kind::FPowI); })
                                    .Case([&](arith::AddIOp) { return kind(Kind::AddI); })
                                    .Case([&](arith::SubIOp) { return kind(Kind::SubI); })
                                    .Case([&](arith::MulIOp) { return kind(Kind::MulI); })
                                    .Case([&](arith::DivSIOp) { return kind(Kind::DivSI); })
                                    .Case([&](arith::DivUIOp) { return kind(Kind::DivUI); })
                                    .Case([&](arith::RemSIOp) { return kind(Kind::RemSI); })
                                    .Case([&](arith::RemUIOp) { return kind(Kind::RemUI); })
                                    .Case([&](arith::FloorDivSIOp) { return kind(Kind::FloorDivSI); })
                                    .Case([&](arith::CeilDivSIOp) { return kind(Kind::CeilDivSI); })
                                    .Case([&](arith::MaxSIOp) { return kind(Kind::MaxSI); })
                                    .Case([&](arith::MinSIOp) { return kind(Kind::MinSI); })
                                    .Case([&](arith::MaxUIOp) { return kind(Kind::MaxUI); })
                                    .Case([&](arith::MinUIOp) { return kind(Kind::MinUI); })
                                    .Case([&](arith::AndIOp) { return kind(Kind::AndI); })
                                    .Case([&](arith::OrIOp) { return kind(Kind::OrI); })
                                    .Case([&](arith::XOrIOp) { return kind(Kind::XorI); })
                                    .Case([&](arith::ShLIOp) { return kind(Kind::ShLI); })
                                    .Case([&](arith::ShRSIOp) { return kind(Kind::ShRSI); })
                                    .Case([&](arith::ShRUIOp) { return kind(Kind::ShRUI); })
                                    .Case([&](math::AbsIOp) { return kind(Kind::AbsI); })
                                    .Case([&](arith::CmpFOp cmp) {
                                      instr.predicate = static_cast<int>(cmp.getPredicate());
                                      return kind(Kind::CmpF);
                                    })
                                    .Case([&](arith::CmpIOp cmp) {
                                      instr.predicate = static_cast<int>(cmp.getPredicate());
                                      instr.bits = widthOf(cmp.getLhs().getType()); // what the unsigned predicates read
                                      return kind(Kind::CmpI);
                                    })
                                    .Case([&](arith::SelectOp) { return kind(Kind::Select); })
                                    .Case<arith::ExtFOp, arith::SIToFPOp, arith::IndexCastOp, arith::ExtSIOp>(
                                        [&](Operation *) { return kind(Kind::Identity); })
                                    .Case([&](arith::TruncFOp truncate) {
                                      instr.semantics = &cast<FloatType>(truncate.getType()).getFloatSemantics();
                                      return kind(Kind::TruncF);
                                    })
                                    .Case([&](arith::UIToFPOp convert) {
                                      instr.bits = widthOf(convert.getIn().getType());
                                      return kind(Kind::UIToFP);
                                    })
                                    .Case([&](arith::FPToSIOp) { return kind(Kind::FPToSI); })
                                    .Case([&](arith::FPToUIOp) { return kind(Kind::FPToUI); })
                                    .Case<arith::TruncIOp>([&](Operation *) { return kind(Kind::Wrap); })
                                    .Case<arith::ExtUIOp, arith::IndexCastUIOp>([&](Operation *convert) {
                                      instr.bits = widthOf(convert->getOperand(0).getType());
                                      return kind(Kind::ExtUI);
                                    })
                                    .Case([&](arith::ConstantOp constant) -> std::optional<Kind> {
                                      if (auto f = dyn_cast<FloatAttr>(constant.getValue())) {
                                        instr.constant = f.getValueAsDouble();
                                        return Kind::Constant;
                                      }
                                      if (auto i = dyn_cast<IntegerAttr>(constant.getValue())) {
                                        instr.constant = i.getType().isInteger(1) ? double(i.getValue().getBoolValue())
                                                                                  : double(i.getValue().getSExtValue());
                                        return Kind::Constant;
                                      }
                                      return std::nullopt;
                                    })
                                    .Default([&](Operation *) { return std::nullopt; });
  if (!decoded) {
    why = "the interpreter has no meaning for it";
    return false;
  }
  instr.kind = *decoded;
  return true;
}

double kforge::interpret::wrapInteger(double value, unsigned bits) {
  if (!std::isfinite(value))
    return 0;
  int64_t v = static_cast<int64_t>(value);
  if (bits == 1)
    return double(v & 1);
  if (bits >= 64)
    return double(v);
  uint64_t mask = (uint64_t(1) << bits) - 1, u = uint64_t(v) & mask;
  if (u >> (bits - 1))
    return double(int64_t(u | ~mask));
  return double(int64_t(u));
}

/// The unsigned interpretation of a `bits`-wide integer held signed.
static uint64_t asUnsigned(double value, unsigned bits) {
  uint64_t u = uint64_t(int64_t(value));
  return bits >= 64 ? u : u & ((uint64_t(1) << bits) - 1);
}

static bool compareFloats(int predicate, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (static_cast<arith::CmpFPredicate>(predicate)) {
  case arith::CmpFPredicate::AlwaysFalse:
    return false;
  case arith::CmpFPredicate::OEQ:
    return !unordered && a == b;
  case arith::CmpFPredicate::OGT:
    return !unordered && a > b;
  case arith::CmpFPredicate::OGE:
    return !unordered && a >= b;
  case arith::CmpFPredicate::OLT:
    return !unordered && a < b;
  case arith::CmpFPredicate::OLE:
    return !unordered && a <= b;
  case arith::CmpFPredicate::ONE:
    return !unordered && a != b;
  case arith::CmpFPredicate::ORD:
    return !unordered;
  case arith::CmpFPredicate::UEQ:
    return unordered || a == b;
  case arith::CmpFPredicate::UGT:
    return unordered || a > b;
  case arith::CmpFPredicate::UGE:
    return unordered || a >= b;
  case arith::CmpFPredicate::ULT:
    return unordered || a < b;
  case arith::CmpFPredicate::ULE:
    return unordered || a <= b;
  case arith::CmpFPredicate::UNE:
    return unordered || a != b;
  case arith::CmpFPredicate::UNO:
    return unordered;
  case arith::CmpFPredicate::AlwaysTrue:
    return true;
  }
  return false;
}

static bool compareIntegers(int predicate, double a, double b, unsigned bits) {
  uint64_t ua = asUnsigned(a, bits), ub = asUnsigned(b, bits);
  switch (static_cast<arith::CmpIPredicate>(predicate)) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return a < b;
  case arith::CmpIPredicate::sle:
    return a <= b;
  case arith::CmpIPredicate::sgt:
    return a > b;
  case arith::CmpIPredicate::sge:
    return a >= b;
  case arith::CmpIPredicate::ult:
    return ua < ub;
  case arith::CmpIPredicate::ule:
    return ua <= ub;
  case arith::CmpIPredicate::ugt:
    return ua > ub;
  case arith::CmpIPredicate::uge:
    return ua >= ub;
  }
  return false;
}

static double roundTo(const llvm::fltSemantics &semantics, double value) {
  if (&semantics == &llvm::APFloat::IEEEsingle())
    return double(float(value));
  if (&semantics == &llvm::APFloat::IEEEdouble())
    return value;
  llvm::APFloat f(value);
  bool losesInfo = false;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return f.convertToDouble();
}

double kforge::interpret::applyScalar(const Instr &in, const double *slots) {
  double a = in.operands[0] >= 0 ? slots[in.operands[0]] : 0;
  double b = in.operands[1] >= 0 ? slots[in.operands[1]] : 0;
  double c = in.operands[2] >= 0 ? slots[in.operands[2]] : 0;
  auto wrap = [&](double v) { return wrapInteger(v, in.bits); };
  int64_t ia = int64_t(a), ib = int64_t(b);
  switch (in.kind) {
  case Kind::AddF:
    return a + b;
  case Kind::SubF:
    return a - b;
  case Kind::MulF:
    return a * b;
  case Kind::DivF:
    return a / b;
  case Kind::RemF:
    return std::fmod(a, b);
  case Kind::MaximumF:
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case Kind::MinimumF:
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  case Kind::MaxNumF:
    return std::fmax(a, b);
  case Kind::MinNumF:
    return std::fmin(a, b);
  case Kind::PowF:
    return std::pow(a, b);
  case Kind::Atan2:
    return std::atan2(a, b);
  case Kind::CopySign:
    return std::copysign(a, b);
  case Kind::NegF:
    return -a;
  case Kind::AbsF:
    return std::fabs(a);
  case Kind::Exp:
    return std::exp(a);
  case Kind::Exp2:
    return std::exp2(a);
  case Kind::Expm1:
    return std::expm1(a);
  case Kind::Log:
    return std::log(a);
  case Kind::Log2:
    return std::log2(a);
  case Kind::Log10:
    return std::log10(a);
  case Kind::Log1p:
    return std::log1p(a);
  case Kind::Sqrt:
    return std::sqrt(a);
  case Kind::Rsqrt:
    return 1.0 / std::sqrt(a);
  case Kind::Tanh:
    return std::tanh(a);
  case Kind::Sin:
    return std::sin(a);
  case Kind::Cos:
    return std::cos(a);
  case Kind::Tan:
    return std::tan(a);
  case Kind::Atan:
    return std::atan(a);
  case Kind::Asin:
    return std::asin(a);
  case Kind::Acos:
    return std::acos(a);
  case Kind::Sinh:
    return std::sinh(a);
  case Kind::Cosh:
    return std::cosh(a);
  case Kind::Erf:
    return std::erf(a);
  case Kind::Erfc:
    return std::erfc(a);
  case Kind::Floor:
    return std::floor(a);
  case Kind::Ceil:
    return std::ceil(a);
  case Kind::Round:
    return std::round(a);
  case Kind::RoundEven:
    return std::nearbyint(a); // the default rounding mode: to nearest, ties to even
  case Kind::Trunc:
    return std::trunc(a);
  case Kind::Cbrt:
    return std::cbrt(a);
  case Kind::IsNaN:
    return std::isnan(a);
  case Kind::IsInf:
    return std::isinf(a);
  case Kind::IsFinite:
    return std::isfinite(a);
  case Kind::Fma:
    return std::fma(a, b, c);
  case Kind::FPowI:
    return std::pow(a, b);
  case Kind::AddI:
    return wrap(double(ia + ib));
  case Kind::SubI:
    return wrap(double(ia - ib));
  case Kind::MulI:
    return wrap(double(ia * ib));
  case Kind::DivSI:
    return ib == 0 ? 0 : wrap(double(ia / ib));
  case Kind::RemSI:
    return ib == 0 ? 0 : wrap(double(ia % ib));
  case Kind::DivUI: {
    uint64_t ub = asUnsigned(b, in.bits);
    return ub == 0 ? 0 : wrap(double(asUnsigned(a, in.bits) / ub));
  }
  case Kind::RemUI: {
    uint64_t ub = asUnsigned(b, in.bits);
    return ub == 0 ? 0 : wrap(double(asUnsigned(a, in.bits) % ub));
  }
  case Kind::FloorDivSI:
    return ib == 0 ? 0 : std::floor(a / b);
  case Kind::CeilDivSI:
    return ib == 0 ? 0 : std::ceil(a / b);
  case Kind::MaxSI:
    return std::max(a, b);
  case Kind::MinSI:
    return std::min(a, b);
  case Kind::MaxUI:
    return asUnsigned(a, in.bits) >= asUnsigned(b, in.bits) ? a : b;
  case Kind::MinUI:
    return asUnsigned(a, in.bits) <= asUnsigned(b, in.bits) ? a : b;
  case Kind::AndI:
    return wrap(double(ia & ib));
  case Kind::OrI:
    return wrap(double(ia | ib));
  case Kind::XorI:
    return wrap(double(ia ^ ib));
  case Kind::ShLI:
    return ib < 0 || ib >= int64_t(in.bits) ? 0 : wrap(double(uint64_t(ia) << ib));
  case Kind::ShRSI:
    return ib < 0 || ib >= int64_t(in.bits) ? (ia < 0 ? -1 : 0) : double(ia >> ib);
  case Kind::ShRUI:
    return ib < 0 || ib >= int64_t(in.bits) ? 0 : wrap(double(asUnsigned(a, in.bits) >> ib));
  case Kind::AbsI:
    return std::fabs(a);
  case Kind::CmpF:
    return compareFloats(in.predicate, a, b);
  case Kind::CmpI:
    return compareIntegers(in.predicate, a, b, in.bits);
  case Kind::Select:
    return a != 0 ? b : c;
  case Kind::Identity:
    return a;
  case Kind::TruncF:
    return roundTo(*in.semantics, a);
  case Kind::UIToFP:
    return double(asUnsigned(a, in.bits));
  case Kind::FPToSI:
    return wrap(std::trunc(a));
  case Kind::FPToUI:
    return wrap(std::trunc(a));
  case Kind::Wrap:
    return wrap(a);
  case Kind::ExtUI:
    return double(asUnsigned(a, in.bits));
  case Kind::Constant:
    return in.constant;
  case Kind::Index:
  case Kind::Extract:
    break;
  }
  return NAN;
}
