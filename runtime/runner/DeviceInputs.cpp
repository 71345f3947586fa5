//===- DeviceInputs.cpp - a GPU executor's inputs made on the device ------===//

#include "DeviceInputs.h"

#include <algorithm>

using namespace kforge;

std::vector<uint64_t> kforge::checkedInputPositions(size_t count) {
  std::vector<uint64_t> positions;
  constexpr uint64_t kChecks = 32;
  for (uint64_t j = 0; j < kChecks && count > 0; ++j) {
    uint64_t at = j * (count - 1) / (kChecks - 1);
    if (positions.empty() || positions.back() != at)
      positions.push_back(at);
  }
  return positions;
}

// Random.h's inputValue, element i of a grid-stride loop: first = mix64(key + i * golden), then the index
// mode's first % bound, or the centred sum of the eight 16-bit pieces of first and mix64(first ^ c) times the
// scale (in the positive mode its absolute value, at least one step of the scale: never 0).
#define KFORGE_MIX64(z, t)                                                                                             \
  "    shr.u64 " t ", " z ", 30;\n    xor.b64 " z ", " z ", " t ";\n    mul.lo.u64 " z ", " z                          \
  ", 0xbf58476d1ce4e5b9;\n    shr.u64 " t ", " z ", 27;\n    xor.b64 " z ", " z ", " t ";\n    mul.lo.u64 " z ", " z   \
  ", 0x94d049bb133111eb;\n    shr.u64 " t ", " z ", 31;\n    xor.b64 " z ", " z ", " t ";\n"
#define KFORGE_PIECE(sum, word, shift, t)                                                                              \
  "    shr.u64 " t ", " word ", " shift ";\n    and.b64 " t ", " t ", 65535;\n    add.u64 " sum ", " sum ", " t ";\n"

const char *kforge::fillInputsPtx() {
  return ".version 7.0\n"
         ".target sm_75\n"
         ".address_size 64\n"
         "\n"
         ".visible .entry kforge_fill_inputs(\n"
         "    .param .u64 kforge_fill_inputs_out,\n"
         "    .param .u64 kforge_fill_inputs_count,\n"
         "    .param .u64 kforge_fill_inputs_key,\n"
         "    .param .u64 kforge_fill_inputs_mode,\n"
         "    .param .u64 kforge_fill_inputs_bound)\n"
         "{\n"
         "    .reg .pred %p<4>;\n"
         "    .reg .b32 %r<6>;\n"
         "    .reg .f32 %f<2>;\n"
         "    .reg .b64 %rd<16>;\n"
         "\n"
         "    ld.param.u64 %rd1, [kforge_fill_inputs_out];\n"
         "    ld.param.u64 %rd2, [kforge_fill_inputs_count];\n"
         "    ld.param.u64 %rd3, [kforge_fill_inputs_key];\n"
         "    ld.param.u64 %rd4, [kforge_fill_inputs_mode];\n"
         "    ld.param.u64 %rd5, [kforge_fill_inputs_bound];\n"
         "    cvta.to.global.u64 %rd1, %rd1;\n"
         "    mov.u32 %r1, %ctaid.x;\n"
         "    mov.u32 %r2, %ntid.x;\n"
         "    mov.u32 %r3, %tid.x;\n"
         "    mov.u32 %r4, %nctaid.x;\n"
         "    mul.wide.u32 %rd6, %r1, %r2;\n"
         "    cvt.u64.u32 %rd7, %r3;\n"
         "    add.u64 %rd6, %rd6, %rd7;\n"
         "    mul.wide.u32 %rd7, %r4, %r2;\n"
         "    setp.eq.u64 %p2, %rd4, 2;\n"
         "    setp.eq.u64 %p3, %rd4, 1;\n"
         "$L_loop:\n"
         "    setp.ge.u64 %p1, %rd6, %rd2;\n"
         "    @%p1 bra $L_done;\n"
         "    mul.lo.u64 %rd8, %rd6, 0x9e3779b97f4a7c15;\n"
         "    add.u64 %rd8, %rd8, %rd3;\n" KFORGE_MIX64(
             "%rd8",
             "%rd10") "    @%p2 bra.uni $L_index;\n"
                      "    xor.b64 %rd9, %rd8, 0x2545f4914f6cdd1d;\n" KFORGE_MIX64(
                          "%rd9", "%rd10") "    mov.u64 %rd11, 0;\n" KFORGE_PIECE("%rd11", "%rd8", "0", "%rd10")
                          KFORGE_PIECE("%rd11", "%rd8", "16", "%rd10") KFORGE_PIECE("%rd11", "%rd8", "32", "%rd10")
                              KFORGE_PIECE("%rd11", "%rd8", "48", "%rd10") KFORGE_PIECE("%rd11", "%rd9", "0", "%rd10")
                                  KFORGE_PIECE("%rd11", "%rd9", "16", "%rd10")
                                      KFORGE_PIECE("%rd11", "%rd9", "32", "%rd10") KFORGE_PIECE(
                                          "%rd11", "%rd9", "48", "%rd10") "    sub.s64 %rd11, %rd11, 262140;\n"
                                                                          "    cvt.rn.f32.s64 %f1, %rd11;\n"
                                                                          "    mul.rn.f32 %f1, %f1, 0f379CC471;\n"
                                                                          "    @%p3 abs.f32 %f1, %f1;\n"
                                                                          "    @%p3 max.f32 %f1, %f1, 0f379CC471;\n"
                                                                          "    bra $L_store;\n"
                                                                          "$L_index:\n"
                                                                          "    rem.u64 %rd11, %rd8, %rd5;\n"
                                                                          "    cvt.rn.f32.u64 %f1, %rd11;\n"
                                                                          "$L_store:\n"
                                                                          "    shl.b64 %rd12, %rd6, 2;\n"
                                                                          "    add.u64 %rd12, %rd1, %rd12;\n"
                                                                          "    st.global.f32 [%rd12], %f1;\n"
                                                                          "    add.u64 %rd6, %rd6, %rd7;\n"
                                                                          "    bra $L_loop;\n"
                                                                          "$L_done:\n"
                                                                          "    ret;\n"
                                                                          "}\n";
}

namespace {
/// The generator's module, loaded once per process (an executor runs one candidate, or the reference for a
/// whole search).
struct FillModule {
  void *module = nullptr;
  CUfunction function = nullptr;
  int multiprocessors = 0;
};
} // namespace

static std::string loadFillModule(CudaDriver &cuda, FillModule &fill) {
  if (fill.function)
    return "";
  if (!cuda.moduleLoadData || !cuda.moduleGetFunction || !cuda.launchKernel)
    return "making inputs on the device needs cuModuleLoadData, cuModuleGetFunction and cuLaunchKernel, which this "
           "CUDA driver lacks";
  if (std::string e = cuda.check(cuda.moduleLoadData(&fill.module, fillInputsPtx()), "cuModuleLoadData(inputs)");
      !e.empty())
    return e;
  if (std::string e = cuda.check(cuda.moduleGetFunction(&fill.function, fill.module, "kforge_fill_inputs"),
                                 "cuModuleGetFunction(kforge_fill_inputs)");
      !e.empty())
    return e;
  // (The grid's size only: the values do not depend on it.)
  cuda.deviceGetAttribute(&fill.multiprocessors, kDeviceMultiprocessorCount, cuda.device);
  return "";
}

std::string kforge::fillInputsOnDevice(CudaDriver &cuda, CUdeviceptr buffer, size_t count, const DeviceInputSpec &spec,
                                       std::vector<uint32_t> &checked) {
  static FillModule fill;
  if (std::string e = loadFillModule(cuda, fill); !e.empty())
    return e;
  if (spec.mode == InputMode::Index && spec.bound == 0)
    return "an index input with no bound";
  unsigned long long out = buffer, elements = count, key = spec.key, mode = static_cast<uint32_t>(spec.mode),
                     bound = spec.bound;
  void *params[] = {&out, &elements, &key, &mode, &bound};
  constexpr unsigned kThreads = 256;
  unsigned blocks = static_cast<unsigned>(
      std::clamp<size_t>((count + kThreads - 1) / kThreads, 1, size_t(std::max(1, fill.multiprocessors)) * 8));
  if (std::string e =
          cuda.check(cuda.launchKernel(fill.function, blocks, 1, 1, kThreads, 1, 1, 0, nullptr, params, nullptr),
                     "cuLaunchKernel(inputs)");
      !e.empty())
    return e;
  checked.clear();
  for (uint64_t at : checkedInputPositions(count)) {
    uint32_t bits = 0;
    if (std::string e = cuda.check(cuda.memcpyDtoH(&bits, buffer + at * 4, 4), "cuMemcpyDtoH(inputs check)");
        !e.empty())
      return e;
    checked.push_back(bits);
  }
  return "";
}

std::string kforge::selfTestDeviceInputs(CudaDriver &cuda) {
  static const std::string outcome = [&]() -> std::string {
    constexpr size_t kCount = 4099; // not a multiple of a block, a warp or a vector
    CUdeviceptr buffer = 0;
    if (std::string e = cuda.check(cuda.memAlloc(&buffer, kCount * 4), "cuMemAlloc(inputs self-test)"); !e.empty())
      return e;
    std::string why;
    std::vector<float> values(kCount);
    std::vector<uint32_t> checked;
    for (InputMode mode : {InputMode::Normal, InputMode::Positive, InputMode::Index}) {
      DeviceInputSpec spec{inputKey(12345, static_cast<uint64_t>(mode)), mode, mode == InputMode::Index ? 50257u : 0u};
      if ((why = fillInputsOnDevice(cuda, buffer, kCount, spec, checked)).empty())
        why = cuda.check(cuda.memcpyDtoH(values.data(), buffer, kCount * 4), "cuMemcpyDtoH(inputs self-test)");
      for (size_t i = 0; why.empty() && i < kCount; ++i)
        if (float expected = inputValue(spec.key, i, spec.mode, spec.bound); values[i] != expected)
          why = "the GPU's generator gives " + std::to_string(values[i]) + " at element " + std::to_string(i) +
                " of mode " + std::to_string(static_cast<int>(mode)) + ", the host's " + std::to_string(expected);
      if (!why.empty())
        break;
    }
    cuda.memFree(buffer);
    return why;
  }();
  return outcome;
}
