//===- L2Flush.cpp - evicting L2 before each timed GPU call ---------------===//

#include "L2Flush.h"

#include <algorithm>

using namespace kforge;

bool kforge::isL2State(const std::string &state) { return state == "dirty" || state == "clean"; }

// The values are never used: the sink is written only if the buffer's words xor to a constant that the
// zeroed buffer cannot give, which keeps the loads without a store per thread.
const char *kforge::l2ReadFlushPtx() {
  return R"(.version 7.0
.target sm_75
.address_size 64

.visible .entry kforge_l2_read_flush(
    .param .u64 kforge_l2_read_flush_buffer,
    .param .u64 kforge_l2_read_flush_vectors,
    .param .u64 kforge_l2_read_flush_sink)
{
    .reg .pred %p<3>;
    .reg .b32 %r<10>;
    .reg .b64 %rd<9>;

    ld.param.u64 %rd1, [kforge_l2_read_flush_buffer];
    ld.param.u64 %rd2, [kforge_l2_read_flush_vectors];
    ld.param.u64 %rd3, [kforge_l2_read_flush_sink];
    cvta.to.global.u64 %rd1, %rd1;
    cvta.to.global.u64 %rd3, %rd3;
    mov.u32 %r1, %ctaid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %tid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %rd4, %r1, %r2;
    cvt.u64.u32 %rd5, %r3;
    add.u64 %rd4, %rd4, %rd5;
    mul.wide.u32 %rd6, %r4, %r2;
    mov.b32 %r5, 0;
$L_loop:
    setp.ge.u64 %p1, %rd4, %rd2;
    @%p1 bra $L_done;
    shl.b64 %rd7, %rd4, 4;
    add.u64 %rd8, %rd1, %rd7;
    ld.global.v4.u32 {%r6, %r7, %r8, %r9}, [%rd8];
    xor.b32 %r5, %r5, %r6;
    xor.b32 %r5, %r5, %r7;
    xor.b32 %r5, %r5, %r8;
    xor.b32 %r5, %r5, %r9;
    add.u64 %rd4, %rd4, %rd6;
    bra $L_loop;
$L_done:
    setp.ne.u32 %p2, %r5, 0x9E3779B9;
    @%p2 bra $L_end;
    st.global.u32 [%rd3], %r5;
$L_end:
    ret;
}
)";
}

L2Flush::~L2Flush() {
  if (buffer)
    cuda.memFree(buffer);
  if (sink)
    cuda.memFree(sink);
  if (module && cuda.moduleUnload)
    cuda.moduleUnload(module);
}

std::string L2Flush::prepare(int ordinal, const std::string &state) {
  clean = state == "clean";
  int l2 = 0, device = 0, multiprocessors = 0;
  cuda.deviceGet(&device, ordinal);
  cuda.deviceGetAttribute(&l2, kDeviceL2CacheSize, device);
  cuda.deviceGetAttribute(&multiprocessors, kDeviceMultiprocessorCount, device);
  bytes = std::max<size_t>(4 * static_cast<size_t>(l2), 256u << 20);
  if (std::string error = cuda.check(cuda.memAlloc(&buffer, bytes), "cuMemAlloc(flush)"); !error.empty())
    return error;
  if (!clean)
    return "";
  if (!cuda.moduleLoadData || !cuda.moduleGetFunction || !cuda.launchKernel)
    return "--l2-flush clean needs cuModuleLoadData, cuModuleGetFunction and cuLaunchKernel, which this CUDA "
           "driver lacks";
  std::string error = cuda.check(cuda.memAlloc(&sink, 16), "cuMemAlloc(flush sink)");
  if (error.empty())
    error = cuda.check(cuda.moduleLoadData(&module, l2ReadFlushPtx()), "cuModuleLoadData(L2 read flush)");
  if (error.empty())
    error = cuda.check(cuda.moduleGetFunction(&read, module, "kforge_l2_read_flush"),
                       "cuModuleGetFunction(kforge_l2_read_flush)");
  if (error.empty()) // what the read kernel reads: defined values, once
    error = cuda.check(cuda.memsetD8(buffer, 0, bytes), "cuMemsetD8(flush)");
  grid = static_cast<unsigned>(std::max(1, multiprocessors) * 4);
  return error;
}

std::string L2Flush::run(int rep) {
  if (!clean)
    return cuda.check(cuda.memsetD8(buffer, static_cast<unsigned char>(rep), bytes), "cuMemsetD8(flush)");
  unsigned long long vectors = bytes / 16;
  void *params[] = {&buffer, &vectors, &sink};
  return cuda.check(cuda.launchKernel(read, grid, 1, 1, 512, 1, 1, 0, nullptr, params, nullptr),
                    "cuLaunchKernel(L2 read flush)");
}

std::string L2Flush::describe() const {
  return clean ? "L2 flushed by reading a buffer of 4x L2 (left clean)"
               : "L2 flushed by writing a buffer of 4x L2 (left dirty)";
}
