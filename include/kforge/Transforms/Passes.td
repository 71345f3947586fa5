//===- Passes.td - kforge micro passes ---------------------*- tablegen -*-===//
//
// Passes that kforge's lowering pipelines run around upstream MLIR's own. Each one
// handles one trap recorded in shared/TOOLCHAIN.md, so the pipelines stay a plain list.
//
//===----------------------------------------------------------------------===//

#ifndef KFORGE_TRANSFORMS_PASSES
#define KFORGE_TRANSFORMS_PASSES

include "mlir/Pass/PassBase.td"

def KforgeEmitCInterface : Pass<"kforge-emit-c-interface", "mlir::ModuleOp"> {
  let summary = "Mark public functions with llvm.emit_c_interface";
  let description = [{
    Adds the `llvm.emit_c_interface` unit attribute to every public `func.func`
    that has a body, so the LLVM lowering emits a `_mlir_ciface_<name>` wrapper
    taking memref descriptors by pointer. That wrapper is the C ABI that kforge's
    runner and framework bindings call.
  }];
}

def KforgeDropArgumentResults : Pass<"kforge-drop-argument-results", "mlir::ModuleOp"> {
  let summary = "Drop function results that are always one of the function's arguments";
  let description = [{
    After bufferization a destination-passing function such as
    `func @f(%a, %out) -> tensor` returns the buffer of `%out`. Upstream keeps that
    result on public functions, and `buffer-results-to-out-params` would then add
    a second output argument plus a host-side `memref.copy` into it; on the GPU path
    that copy runs on the host over device memory. This pass erases every result
    that each `func.return` feeds from the same entry-block argument (looking
    through `memref.cast`), so the argument itself is the output.

    Functions that are called from inside the module are left untouched.
  }];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::memref::MemRefDialect"];
}

def KforgeVerifyGpuPayload : Pass<"kforge-verify-gpu-payload", "mlir::ModuleOp"> {
  let summary = "Check that a bufferized payload touches memory only inside GPU kernels";
  let description = [{
    On the GPU path every buffer a function receives is device memory, so host code
    that reads or writes a memref (a linalg op or loop nest that the schedule did not
    map to `gpu.launch`, a `memref.copy`) would dereference device pointers on the
    host. This pass reports each such operation with an error naming it, and fails.
    It also fails on a module with functions but no `gpu.launch` at all.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def KforgeHostAllocsToDevice : Pass<"kforge-host-allocs-to-device", "mlir::ModuleOp"> {
  let summary = "Turn host allocations used by GPU kernels into gpu.alloc / gpu.dealloc";
  let description = [{
    A `memref.alloc` in host code becomes `malloc` on the host; a kernel that writes it
    writes host memory. Temporaries that a schedule leaves between two kernels are
    rewritten to `gpu.alloc` with a `gpu.dealloc` before the function returns (or in
    place of an existing `memref.dealloc`). An allocation that the function returns
    cannot be freed by it and is reported as an error: make the payload
    destination-passing or let `buffer-results-to-out-params` hoist it.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect"];
}

def KforgeWorkgroupAllocsToAttributions
    : Pass<"kforge-workgroup-allocs-to-attributions", "mlir::ModuleOp"> {
  let summary = "Move shared-memory allocations made on the host into the kernel that uses them";
  let description = [{
    Upstream promotion (`transform.structured.promote` with a workgroup mapping) places
    its buffers at the function's allocation scope, i.e. on the host, outside the
    `gpu.launch` that uses them; outlining would then pass them as kernel arguments.
    Each `memref.alloc` / `memref.alloca` in workgroup memory whose users all sit in one
    `gpu.launch` becomes a workgroup attribution of that launch (shared memory), and its
    deallocations are dropped. One used by several launches, or by host code, is an error.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::memref::MemRefDialect"];
}

def KforgeLowerGpuMemorySpaces : Pass<"kforge-lower-gpu-memory-spaces", "mlir::gpu::GPUModuleOp"> {
  let summary = "Replace #gpu.address_space memory spaces by NVVM's numeric address spaces";
  let description = [{
    Rewrites every memref type in a gpu.module whose memory space is
    `#gpu.address_space<global|workgroup|private>` to the numeric NVVM address space
    (1, 3, 5), in operations, block arguments and function types alike.
    `convert-gpu-to-nvvm` knows that mapping but the vector-to-LLVM patterns that must
    run before it do not ("conversion of memref memory space ... to integer address
    space failed"). `gpu.dynamic_shared_memory`, whose verifier insists on the
    workgroup attribute, is lowered first as convert-gpu-to-nvvm would lower it: a
    zero-sized external array in the shared address space (1024-byte aligned) whose
    address becomes the base of a memref descriptor.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KforgeAlignSharedMemory : Pass<"kforge-align-shared-memory", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give every shared-memory buffer of a GPU module at least a given alignment";
  let description = [{
    Shared-memory buffers (workgroup attributions of `gpu.func`s and `memref.global`s in
    workgroup memory) are emitted with the element type's alignment (`.align 4` for f32)
    unless told otherwise, while LLVM's load/store vectorizer may still combine
    accesses to them into 128-bit `ld.shared.v4`, which then fault with a misaligned
    address (seen on the H200). This pass raises their alignment to `alignment` bytes.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16", "Minimum alignment in bytes">,
  ];
}

def KforgeExpandBF16 : Pass<"kforge-expand-bf16", "mlir::ModuleOp"> {
  let summary = "Expand bf16 conversions (arith.truncf / arith.extf) into integer arithmetic for the CPU";
  let description = [{
    LLVM lowers `fptrunc float to bfloat` on x86 to a call to `__truncsfbf2`, a compiler-rt builtin that a
    kernel library loaded with dlopen cannot resolve. Upstream's bf16 expansion patterns
    (round to nearest even, NaN kept quiet) replace the conversions with integer operations first.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect"];
}

def KforgeLowerSubgroupReduce : Pass<"kforge-lower-subgroup-reduce", "mlir::gpu::GPUModuleOp"> {
  let summary = "Lower gpu.subgroup_reduce (and uniform gpu.all_reduce) to shuffles over 32-lane warps";
  let description = [{
    `convert-gpu-to-nvvm` lowers `gpu.subgroup_reduce` only for 32-bit integers (to `redux.sync`); the
    float reductions that `transform.kforge.distribute_rows_to_lanes` creates (row max, row sum) need
    shuffles. This pass applies upstream's patterns for that (whole warps and clusters of 2-16 lanes,
    values wider than 32 bits broken down first), leaving `gpu.shuffle` ops that become `shfl.sync`.
    Uniform `gpu.all_reduce`s in kernels (rows spread over a whole block) become shuffles within each
    warp and the warps' partials through a workgroup buffer of their own. Where the block is whole warps
    of a known size and the reduction runs once per kernel run, one barrier suffices: every warp reads all
    the partials and reduces them itself (upstream's lowering, used otherwise, has warp 0 reduce them and
    write the total back, a second barrier). A barrier right before the kernel's return is dropped.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::cf::ControlFlowDialect",
                           "mlir::memref::MemRefDialect"];
}

def KforgeUnrollStridedTransfers : Pass<"kforge-unroll-strided-transfers", "mlir::ModuleOp"> {
  let summary = "Unroll 1-D vector transfers over a strided memref dimension into scalar loads and stores";
  let description = [{
    A thread's cyclic slice of a row (`transform.kforge.distribute_rows_to_lanes`: lane l owns columns l,
    l + 32, ...) is a memref with a non-unit innermost stride. Vectorized, it is read once into one vector
    (vector<128xf32> for a 4096-wide row over 32 lanes) and every phase of the row (max, exp, sum, divide)
    works on that value. Upstream's `convert-vector-to-scf` lowers such a 1-D transfer to an `scf.for` that
    inserts each element at a dynamic position, and LLVM then keeps the whole vector in a stack slot
    (4.6 KB of local memory per thread for softmax 4096 wide). This pass writes the transfer as one scalar
    `memref.load` per element gathered with `vector.from_elements` (reads), or one `vector.extract` and
    `memref.store` per element (writes): static positions, so the vector lives in registers.

    Only unmasked, in-bounds transfers of a static 1-D vector of at most `max-elements` elements whose
    permutation map is the minor identity are rewritten; contiguous ones (unit stride) are left to the
    vector loads of `convert-vector-to-llvm`. Unmasked 0-D transfers (`vector<f32>`: a lane that owns a
    single column group of a row) become one scalar `memref.load` or `memref.store` too, since
    `convert-vector-to-scf` and `convert-vector-to-llvm` leave them as they are.
  }];
  let options = [
    Option<"maxElements", "max-elements", "int64_t", /*default=*/"512", "Largest vector to unroll">,
  ];
  let dependentDialects = ["mlir::memref::MemRefDialect", "mlir::vector::VectorDialect", "mlir::arith::ArithDialect"];
}

def KforgeSinkLaunchConstants : Pass<"kforge-sink-launch-constants", "mlir::ModuleOp"> {
  let summary = "Sink constants into gpu.launch bodies, also through the casts an earlier type conversion left";
  let description = [{
    Like upstream's `gpu-launch-sink-index-computations` (constants, dims, selects and comparisons), and also
    `builtin.unrealized_conversion_cast`s of such values: `convert-nvgpu-to-nvvm` converts loops
    structurally, so a tiled K loop's bounds reach the launch as casts of host constants. Upstream leaves
    those outside, and outlining turns them into kernel arguments; the kernel then cannot know its loop's
    step, and nothing (kforge-prove-vector-alignment, LLVM) can prove the alignment of accesses offset by it.
  }];
}

def KforgeForwardVectorTransfers : Pass<"kforge-forward-vector-transfers", "mlir::gpu::GPUModuleOp"> {
  let summary = "Forward vector writes to the reads that follow them and drop overwritten writes, in kernels";
  let description = [{
    A fused fill of a gemm tile's output bufferizes to a write of zeros to C that the accumulator is read back
    from, and the result is written over it after the K loop: C is written twice, and the accumulators start
    from memory. Upstream's transfer flow optimisation (`vector::transferOpflowOpt`: a read of what a
    dominating write stored takes the written value; a write overwritten before any read is dropped) makes
    the accumulators start in registers and leaves one write of C. Like upstream, it considers the users of
    the same buffer only: kernel arguments are distinct buffers (kforge's calling convention). Before that,
    upstream's hoisting of redundant vector transfers (a loop that reads and writes back the same place every
    iteration carries the value instead): the transform's finish hoists on the host function, where a
    buffer that also has views (split: the row kernel reads the matmul's result through subviews) blocks
    it; in the kernel the buffer is an argument without views.
  }];
}

def KforgeVersionMaskedAccesses : Pass<"kforge-version-masked-accesses", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give each masked 1-D vector access in a kernel an unmasked path for when every lane is on";
  let description = [{
    A partial tile (a block or thread tile that does not divide its loop) is vectorized at the full tile's
    sizes under a mask, and the mask is dynamic in every tile, full ones included. NVPTX writes a masked
    load or store as one predicated scalar access per element, so every thread of a full tile would read
    and write element by element. This pass puts each masked 1-D access (a `vector.transfer_read` /
    `vector.transfer_write` with a mask, `vector.maskedload`, `vector.maskedstore`) under
    `scf.if (all lanes of the mask are on)`: the then-branch is the same access without its mask (a plain
    vector load or store, 128 bits where kforge-prove-vector-alignment proves the address allows it), the
    else-branch the masked access as it was. Only the tiles at a loop's end take the else-branch.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::scf::SCFDialect"];
}

def KforgeProveVectorAlignment : Pass<"kforge-prove-vector-alignment", "mlir::gpu::GPUModuleOp"> {
  let summary = "Give vector loads and stores in kernels the alignment their addresses provably have";
  let description = [{
    `convert-vector-to-llvm` gives a `vector.load` of `vector<4xf32>` the element's alignment (4 bytes), and
    LLVM emits a 128-bit `ld.global.v4` only where it proves 16 bytes itself: it did for B's rows of a gemm
    tile and not for A's (whose column offset is the K loop's induction variable), so A was read with four
    scalar loads per row. This pass first lowers 1-D in-bounds transfers to `vector.load` / `vector.store`,
    then proves each access's alignment from what is known, and records it in the op's `alignment`:

    - the base: a kernel argument's `llvm.align` (kforge-align-kernel-arguments; callers' buffers are checked
      at run time), a workgroup or private attribution's `llvm.align`, a `memref.global`'s alignment;
    - the offset, in elements: the memref's layout offset (through `memref.subview`: offsets times the
      source's strides) plus each index times its static stride, where the power of two dividing an index
      is derived from constants, `arith` add / sub / mul / shl / select / casts, `affine.apply`, and loop
      induction variables (their lower bound and step).

    Nothing is asserted: an access whose offset cannot be shown divisible keeps its element alignment. The
    alignment is capped at `max-alignment` bytes.
  }];
  let options = [
    Option<"maxAlignment", "max-alignment", "int64_t", /*default=*/"16", "Largest alignment recorded, in bytes">,
  ];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::memref::MemRefDialect"];
}

def KforgePrepareKernelAttributes : Pass<"kforge-prepare-kernel-attributes", "mlir::ModuleOp"> {
  let summary = "Name the kernels that carry kforge launch bounds, before outlining";
  let description = [{
    Outlining drops a `gpu.launch`'s own attributes. For each launch carrying
    `kforge.min_blocks_per_sm` / `kforge.max_registers` / `kforge.streaming_stores` / `kforge.read_only_inputs` /
    `kforge.load_l2_policy` (set by
    `transform.kforge.set_kernel_attributes`), this pass fixes the name of the kernel it
    will become (the launch's `module` / `function`, `<function>_kernel_bounded_<n>`
    unless already given) and records the bounds under that name in the module attribute
    `kforge.kernel_attributes`, for `kforge-apply-kernel-attributes` after outlining.
  }];
}

def KforgeApplyKernelAttributes : Pass<"kforge-apply-kernel-attributes", "mlir::ModuleOp"> {
  let summary = "Put recorded launch bounds on the outlined kernels (nvvm.minctasm / nvvm.maxnreg)";
  let description = [{
    Reads `kforge.kernel_attributes` (see kforge-prepare-kernel-attributes) and sets
    `nvvm.minctasm` / `nvvm.maxnreg` on each named `gpu.func`, which the NVVM lowering emits
    as PTX `.minnctapersm` / `.maxnreg`, and `kforge.streaming_stores` / `kforge.read_only_inputs` /
    `kforge.load_l2_policy` for kforge-streaming-stores / kforge-invariant-input-loads / kforge-l2-load-policy.
    A recorded kernel that no longer exists is an error.
  }];
}

def KforgeStreamingStores : Pass<"kforge-streaming-stores", "mlir::ModuleOp"> {
  let summary = "Assemble the kernels that asked for streaming stores with ptxas -dscm=cs";
  let description = [{
    A kernel carrying `kforge.streaming_stores` (put there by kforge-apply-kernel-attributes, from
    `transform.kforge.set_kernel_attributes {streaming_stores}`) writes output it never reads back. This
    pass adds `-dscm=cs` to the `ptxas-cmd-options` of each NVVM target of the kernel's `gpu.module`: ptxas
    then gives every global and generic store the evict-first cache operator `.cs`, so L2 evicts the
    written lines first and keeps room for the loads (on the H200 the SASS is byte-equal to writing
    `st.global.cs` in the PTX). ptxas options apply to a whole module: kforge's outlining puts each kernel
    in a module of its own. The request attribute is removed. Run after nvvm-attach-target; a module
    without a target is an error.

    NVPTX emits no cache operator on stores (LLVM 22 ignores `!nontemporal` there), so the PTX itself keeps
    plain `st.global`: with `assembled=false` (format=isa, PTX for the driver's JIT) the pass warns that
    the request has no effect instead.
  }];
  let options = [
    Option<"assembled", "assembled", "bool", /*default=*/"true",
           "The modules are assembled by ptxas (format=bin or fatbin); otherwise warn that nothing changes">,
  ];
  let dependentDialects = ["mlir::NVVM::NVVMDialect"];
}

def KforgeInvariantInputLoads : Pass<"kforge-invariant-input-loads", "mlir::gpu::GPUModuleOp"> {
  let summary = "Mark the loads from the buffers a kernel only reads invariant (ld.global.nc)";
  let description = [{
    In each kernel (`llvm.func`, after the NVVM lowering) carrying `kforge.read_only_inputs` (put there by
    kforge-apply-kernel-attributes, from `transform.kforge.set_kernel_attributes {read_only_inputs}`), every
    pointer argument that is only loaded from, directly or through address arithmetic (`getelementptr`,
    address-space casts), gets its loads marked `invariant` (LLVM's `!invariant.load`), which NVPTX emits as
    `ld.global.nc`: the read-only, non-coherent path, whose cache keeps data that many blocks read (a
    layernorm's gamma and beta). An argument with any other use (a store to or of it, an integer cast such as
    a bulk copy's address, a call, a branch argument) keeps plain loads, as do volatile and atomic loads.
    Sound when no buffer the kernel reads is written during the kernel by another argument: kforge's
    artifacts take inputs and outputs in distinct buffers. The request attribute is removed.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KforgeL2LoadPolicy : Pass<"kforge-l2-load-policy", "mlir::gpu::GPUModuleOp"> {
  let summary = "Load a kernel's buffers with an L2 cache policy (evict_first / evict_last)";
  let description = [{
    In each kernel (`llvm.func`, after the NVVM lowering) carrying `kforge.load_l2_policy = "evict_first"`
    or `"evict_last"` (put there by kforge-apply-kernel-attributes, from
    `transform.kforge.set_kernel_attributes {load_l2_policy = ...}`), every load from a pointer argument,
    directly or through address arithmetic, is written as inline PTX
    `ld.global[.nc].L2::cache_hint[.v2|.v4].b16|b32 ..., [address], policy`, the policy made once at the
    kernel's start by `createpolicy.fractional.L2::<policy>.b64 policy, 1.0`: L2 then evicts the lines it
    loads first, or last, among the lines of normal priority. NVPTX emits no such load, hence inline PTX;
    torch.compile's Triton kernels load the same way. The rewrite itself happens on the optimised LLVM IR,
    in kforge-gpu-module-to-binary (NVPTX combines MLIR's scalar loads into 128-bit ones only while
    generating code, never through inline PTX): this pass checks the request and records it on the
    `llvm.func` as the LLVM function attribute `kforge-load-l2-policy` (its `passthrough`). The kernel's bulk
    copies from global into shared memory (`nvvm.cp.async.bulk.shared.cluster.global`, pipeline_rows' rows)
    get the policy here, as their `l2_cache_hint`; L2 prefetches (`nvvm.cp.async.bulk.prefetch`) do not. A load marked
    invariant (kforge-invariant-input-loads) keeps `.nc`. Loads of 8-bit or pointer values, of more than 128
    bits, vectors not aligned to their size, loads not from a buffer argument, and volatile or atomic loads
    stay as they are; the inline PTX has side effects, so it stays in order with the kernel's stores.
    Needs sm_80 or later: a module whose NVVM target is older is an error, as is a policy other than
    evict_first and evict_last, or one that is not a string. The request attribute is removed.
  }];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def KforgeGpuModuleToBinary : Pass<"kforge-gpu-module-to-binary", "mlir::ModuleOp"> {
  let summary = "gpu-module-to-binary, with kforge's rewrites of the optimised LLVM IR (L2 load policies)";
  let description = [{
    Serialises every `gpu.module` into a `gpu.binary` as upstream's gpu-module-to-binary does (the same
    targets, formats and toolkit), and in between, once LLVM has optimised a module and before code
    generation, applies the kernels' L2 load policies (recorded by kforge-l2-load-policy as the LLVM
    function attribute `kforge-load-l2-policy`): their loads combined into 128-bit vectors where legal,
    then each load from a buffer argument written as inline PTX with the policy.
  }];
  let options = [
    Option<"compilationTarget", "format", "std::string", /*default=*/"\"fatbin\"",
           "The target representation of the compilation process: isa, bin or fatbin">,
    Option<"toolkitPath", "toolkit", "std::string", /*default=*/"\"\"", "The CUDA toolkit's path">,
  ];
}

def KforgeAlignKernelArguments : Pass<"kforge-align-kernel-arguments", "mlir::ModuleOp"> {
  let summary = "Declare the buffers a kernel receives aligned (llvm.align on its memref arguments)";
  let description = [{
    kforge's ABI requires every buffer passed to a kernel library to be aligned to `alignment` bytes (16 by
    default; cuMemAlloc gives 256, and kforge-run and the Python package check it). This pass records that
    on each outlined kernel's memref arguments (`llvm.align`, carried to the aligned pointer by the NVVM
    lowering), so LLVM can prove 128-bit accesses legal (`ld.global.v4`) where the index arithmetic keeps
    them aligned, instead of splitting vector loads into scalars.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16", "Alignment in bytes">,
  ];
}

def KforgeKernelAllocsToAlloca : Pass<"kforge-kernel-allocs-to-alloca", "mlir::ModuleOp"> {
  let summary = "Turn per-thread heap allocations inside GPU kernels into allocas";
  let description = [{
    A `memref.alloc` in the body of a `gpu.launch` (or `gpu.func`) is executed by every
    thread and would become a device-side `malloc`. Statically shaped allocations in
    the default memory space are per-thread scratch, so they become `memref.alloca`
    (registers or local memory) and their `memref.dealloc` is erased. A dynamically
    shaped one whose sizes have constant upper bounds (ValueBoundsOpInterface: a
    lane's slice of a row the lanes do not divide, bounded by the thread id's range)
    becomes an alloca of the bounds viewed at the dynamic sizes; any other is reported
    as an error.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def KforgePeelBoundedLoops : Pass<"kforge-peel-bounded-loops", "mlir::ModuleOp"> {
  let summary = "A kernel loop of q or q + 1 iterations: q with a constant bound, then the last one guarded";
  let description = [{
    When lanes do not divide a row (4095 columns over 256 lanes), lane l owns ceil((N - l) / L)
    columns: q = N / L (rounded down) or q + 1. Lowered to loops, every loop over a lane's columns
    then has a bound that depends on the thread id, so LLVM cannot unroll it: one load is in flight per
    thread (each load's use stalls the next iteration's issue), and the lane's row values, a private
    array indexed by the loop variable, live in local memory. Inside GPU kernels, an `scf.for` with a
    constant lower bound and step whose dynamic upper bound has constant lower and upper bounds
    (ValueBoundsOpInterface) such that at least one iteration always runs and at most one more than
    the guaranteed number may run is split into a loop of the guaranteed iterations (a constant bound:
    unrolled, its array accesses at static positions, so registers) and its possible last iteration
    under an `scf.if`, which carries the loop's values on. A main loop of at most 128 iterations
    (what a thread's 255 registers can hold beside its other values) that reads or writes a private
    array (an alloca) is unrolled fully here (LLVM's own threshold leaves a loop computing exp() partly
    rolled, and a 49-iteration one whole: the array then stays in local memory, one load in flight a
    lane). Other loops are left alone.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def KforgePromoteLoopAccumulators : Pass<"kforge-promote-loop-accumulators", "mlir::ModuleOp"> {
  let summary = "A kernel loop's accumulator in memory becomes a value the loop carries (a register)";
  let description = [{
    A thread-level reduction that is not vectorized, once linalg is lowered to loops, reads its
    accumulator from memory and writes it back on every iteration (a convolution's window, a column
    reduction, split_rows's partials: a global store per element in the PTX). LLVM cannot keep it in a
    register, since it cannot tell the kernel's pointers apart. Inside GPU kernels, innermost loops first,
    an `scf.for` whose body only reads and writes memory through `memref.load` / `memref.store` (nested
    `scf.for` / `scf.if` included; a barrier, a call or any other effect leaves the loop alone) has each
    location it loads and then stores, at the top of its body, on loop-invariant indices, turned into an
    iteration argument: loaded before the loop, stored after it. Only locations of a memref cut from an
    allocation (`memref.alloc`, `alloca`, `gpu.alloc`: nothing else can alias it) that nothing else in the
    loop touches; so the values every other access sees are unchanged.
  }];
  let dependentDialects = ["mlir::scf::SCFDialect", "mlir::memref::MemRefDialect"];
}

def KforgeForwardStoresToCopies : Pass<"kforge-forward-stores-to-copies", "mlir::ModuleOp"> {
  let summary = "A kernel's vector stored whole to scratch and then copied: one vector write to the copy's target";
  let description = [{
    Bufferization copies a value through a scratch buffer when it cannot prove an in-place write
    safe: the lanes of `transform.kforge.distribute_rows_to_lanes` with `vector` > 1 write several
    strided slices of one row, which it cannot tell apart. Inside kernels, a `memref.copy` from a
    statically shaped `memref.alloc`/`alloca` (identity layout, all dimensions but the last 1) that
    only a `vector.store` of the whole buffer at index 0 writes (before the copy, in its block)
    becomes a `vector.transfer_write` of that vector to the copy's target; the store, the copy and
    the buffer go. The vector then stays in registers (a strided target is written by
    `kforge-unroll-strided-transfers`) instead of a per-thread stack copy.
  }];
  let dependentDialects = ["mlir::vector::VectorDialect", "mlir::arith::ArithDialect"];
}

def KforgeCopiesToLinalg : Pass<"kforge-copies-to-linalg", "mlir::ModuleOp"> {
  let summary = "Rewrite memref.copy as linalg.copy so it lowers to loops";
  let description = [{
    `memref.copy` between non-contiguous memrefs lowers to a call to `memrefCopy`,
    a host runtime function that does not exist on the device and that a
    self-contained artifact does not link. `linalg.copy` lowers to plain loops with
    `convert-linalg-to-loops`. With `only-in-kernels`, copies outside GPU kernels
    are left alone.
  }];
  let options = [
    Option<"onlyInKernels", "only-in-kernels", "bool", /*default=*/"false",
           "Rewrite only the copies inside gpu.launch / gpu.func bodies">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def KforgeNormalizeImporter : Pass<"kforge-normalize-importer", "mlir::ModuleOp"> {
  let summary = "Rewrite what importers (torch-mlir) emit into the linalg forms kforge's schedules take";
  let description = [{
    kforge-compile and kforge-tune's payload analysis run this first on every payload. It is
    semantics-preserving; on kforge's own hand-written payloads it changes nothing but canonical forms.

    - A `linalg.transpose` feeding an operand of `linalg.matmul` / `linalg.batch_matmul` (nn.Linear's
      weight) becomes that operand's indexing map: the contraction reads the untransposed tensor
      (matmul_transpose_b form) and the transpose disappears.
    - Other named ops that are neither contractions, convolutions, fills nor copies (`linalg.map`,
      `linalg.broadcast`, `linalg.transpose`, elementwise named ops, `linalg.reduce`) become
      `linalg.generic`; splat constant operands (`arith.constant dense<0.0> : tensor<f32>`) are inlined
      into the body, so no host constant reaches a kernel; unused results (torch's argmax beside a max)
      and operands are erased.
    - Elementwise producers with a single user are fused into it (upstream elementwise fusion), so a
      broadcast copy, a chain of activations or a `pow` before a sum become one op, as in kforge's own
      payloads.
    - Keepdim reductions: an operand dimension of size 1 read through the constant 0 (output map
      `(d0, d1, d2, d3) -> (d0, 0, 0, 0)`) is dropped from the operand (a `tensor.collapse_shape`) and
      from its map; results are `tensor.expand_shape`d back, and reshape pairs fold away.
    - `math.powf` with a small integral constant exponent and `math.fpowi` with a small constant exponent
      become multiplications (exact for negative bases); any other `math.fpowi` gets an i32 exponent
      (libdevice's `__nv_powif` takes an i32; upstream passes an i64 through a mismatched prototype).
    - Mixed precision: the extensions (`arith.extf`) and transposes an importer puts before a matmul /
      batch_matmul (torch-mlir's bf16 nn.Linear: input and transposed weight extended to f32, an f32
      matmul) fold into it when every operand comes from one narrower float type: a matmul of bf16
      operands with f32 accumulation (the same values; the form mma / wgmma take), the weight read through
      the transposed map. An epilogue computed in bf16 and extended at its end for the next matmul, its
      only user, yields bf16. A view that moves a batch matmul's batch dimension stays a copy (narrowed).
    - An `expand_shape` read by an elementwise op moves after it (the op runs collapsed): a Linear on a 3-D
      input is a 2-D matmul, its epilogue and activation one 2-D op, and the result expanded at the end,
      where kforge-tune looks through reshapes to the root.
    - Gathers (`tensor.extract` in a linalg body, torch-mlir's nll_loss picking each row's log-probability
      at its class index): an element read from an elementwise op's result is that op's body computed on
      its operands' elements at the same place, so the whole intermediate (the log-softmax over every
      class) is not needed; an element read at the body's own loop indices (or constants) becomes an
      operand read through the matching map (`(d0, d1) -> (d1)` for a row statistic), so tiling and
      fusion see it. Only reads at data-dependent places of function arguments stay extracts; rank-0 reads
      stay too (upstream inlines such operands as extracts). Integer constants that are index tables
      (each element (i floordiv q) mod m of its own coordinate along one dimension, or one value:
      torch.export's group norm leaves 8 of them, N x C int64 each) are computed from the loop instead
      of stored. A `linalg.generic` without results that only checks (asserts on its operands: nll_loss's
      class-index bounds, written once on their own and again in the op that reads through the indices)
      is erased where another op of the block makes each of its checks again (the same message, on the
      same operands, every element read); no dispatch of kforge-partition can hold an op without results.
      GatherOperands.cpp.
    - Loops that every op walks together become one, where some `linalg.generic` has more loops than a
      GPU grid has dimensions (3) or reduces over several: adjacent loops of one kind that each op's
      operands index as adjacent dimensions, in order, with each tensor cut the same way by every op that
      reads or writes it (decided for the function at once). Arguments are collapsed on entry and results
      expanded on return. A LayerNorm over C x H x W becomes a reduction over rows of C*H*W, an RMS norm
      over NCHW's channels a reduction over C of (N, C, H*W), a 4-D elementwise op 1-D. When a reshape
      would be left between two ops (a tensor a matmul also reads), the function stays as it was.
    - Window ops (convolutions and poolings, named or with their padding fused) whose parallel loops are
      not in their output's order (linalg's NCHW depthwise convolutions iterate n, oh, ow, c and store n, c,
      oh, ow) become generics with the parallel loops reordered as the output's dimensions, the window loops
      after them: GPU tiles map a root's last tiled loop to the threads' x, which is then the output's
      contiguous dimension. LoopOrderAndPadding.cpp.
    - Rank-0 results (a loss's total reduction and the scalar arithmetic after it): each such op gets a
      leading parallel loop of size 1 and `tensor<1x...>` results, read by the next such op as an operand
      through that loop (not a `tensor.extract` in its body); other users read it through a
      `tensor.collapse_shape` to rank 0. The total reduction is then a row reduction of one row, which
      kforge-tune's row schedules take.
    - `results-in-place` (kforge-compile's and kforge-tune's payloads; not before kforge-partition, which
      moves a dispatch's reshapes to its callers): a result returned through reshapes is computed in the
      returned buffer through a view (the op's init is the returned shape's empty tensor reshaped back),
      instead of in a temporary copied into it on the host.
  }];
  let options = [
    Option<"resultsInPlace", "results-in-place", "bool", /*default=*/"false",
           "Compute results returned through reshapes in the returned buffer (one kernel's payload)">,
  ];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect"];
}

def KforgePartition : Pass<"kforge-partition", "mlir::ModuleOp"> {
  let summary = "Split a function of many linalg ops into dispatch functions, one kernel each";
  let description = [{
    Run after `kforge-normalize-importer` on a whole model (an importer function of many ops). The ops
    of the entry function are grouped, in program order, into dispatches, in the spirit of IREE's
    dispatch formation:

    - a contraction (matmul, batch matmul, convolution) with the elementwise ops over its result that
      follow it (bias, activation, residual: the epilogue);
    - reductions over the same rows with the elementwise ops over the same loops or over the rows
      (softmax, layernorm, RMS norm: one row kernel), siblings that read the same tensor included;
    - a chain of elementwise ops over the same loops;
    - any other op with tensor results (`tensor.pad`, `tensor.concat`, ...) alone.

    An op joins the group of its latest producer only (or, for rows, the last group), so the groups stay
    in a topological order. A dispatch's results are one op's: a group of rows whose values leave it from
    several ops (two sibling statistics both returned, a row max that a later sum and the caller both
    read) is cut after the first such op, until each piece's values leave from one (kforge-tune schedules
    the op behind a dispatch's first result and fuses its producers into it; a second op whose values
    leave would stay outside every kernel). Constants, empty tensors and fills are copied into every dispatch that reads
    them; reshapes (`tensor.expand_shape` / `collapse_shape` / `cast`) of a dispatch's own values are
    copied into it, other reshapes stay in the entry (views of contiguous buffers). Each group becomes a
    private function named by its content (`k_<hash>`), so identical kernels of a model are one function
    and are tuned once; the entry becomes the calls in order.

    With `split-dir=DIR` it also writes each dispatch as a payload of its own (`DIR/k_<hash>.mlir`, for
    kforge-compile and kforge-tune) and `DIR/plan.json`: the entry's arguments, its steps (dispatch calls
    and reshapes) over numbered values, and its outputs; kforge's Python package runs a model from it.
    Grouping decides only how fast the kernels can be, never what they compute: each dispatch is
    compiled and verified on its own.
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"\"",
           "The function to partition (default: the only public one)">,
    Option<"splitDirectory", "split-dir", "std::string", /*default=*/"\"\"",
           "Also write each dispatch as a payload file and plan.json into this directory">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::tensor::TensorDialect"];
}

def KforgeApplyTuned : Pass<"kforge-apply-tuned", "mlir::ModuleOp"> {
  let summary = "Apply a tuning database's best schedules to the functions of a module";
  let description = [{
    For every function of the module (the dispatches `kforge-partition` made, or any function), the
    schedule keyed by the function's content name (the name kforge-partition gives it: `k_` and a hash of
    its content, so the same computation finds the same schedule in any model) is applied the way
    kforge-compile applied it for the tuner: the function alone in a module, public, normalized, the
    schedule preloaded and interpreted. So the scheduled function is the tuner's kernel, byte for byte. It
    replaces the function (same name and visibility); its calls pass their tensors as buffers
    (`bufferization.to_buffer`) and take the returned buffers back as tensors (`bufferization.to_tensor
    restrict`), for one-shot bufferization to fold. A function without a schedule is left as it is (the
    default lowering).

    The schedules come from exactly one of:
    - `db=DIR`: a tuning database, the entry `DIR/<target>/<k_hash>/best.mlir` (a
      `kforge.compile_payload` or torch.compile backend run fills it; `target=cpu` or `target=gpu-sm_90`,
      default cpu);
    - `library=FILE`: a tuned library, one file that `kforge-db export` writes from a database: a module
      `{kforge.tuned_library = "kforge-tuned/1", kforge.target = "<key>"}` holding one module per entry,
      `{transform.with_named_sequence, kforge.content_name = "k_<hash>"}`, whose body is that entry's
      best.mlir. Exact matching on the content hash, like an IREE tuning spec's matchers but with no
      pattern to write. `target=`, when given, must be the library's target. A file that is not such a
      library (no format attribute, an entry without a content name, two entries for one name) is an
      error.

    Schedules are treated as untrusted (kforge's schedule confinement) wherever they come from; one that
    no longer applies is an error naming the entry. Run after `kforge-normalize-importer
    --kforge-partition`.
  }];
  let options = [
    Option<"database", "db", "std::string", /*default=*/"\"\"", "The tuning database's directory">,
    Option<"library", "library", "std::string", /*default=*/"\"\"",
           "A tuned library file (kforge-db export), instead of db=">,
    Option<"target", "target", "std::string", /*default=*/"\"cpu\"",
           "The target key: cpu, or gpu-<chip> (gpu-sm_90); with library=, checked against the library's">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect", "mlir::bufferization::BufferizationDialect"];
}

def KforgeSplitNaiveReductions : Pass<"kforge-split-naive-reductions", "mlir::ModuleOp"> {
  let summary = "Split long reductions with few results in two, before the naive GPU mapping";
  let description = [{
    The naive GPU mapping runs one thread per result point, each running the op's reductions
    itself: a loss or a whole-tensor sum of 2^29 elements is one thread for 20 s, which the
    search then pays per seed. Before that mapping, a reduction op with fewer than 4096 result
    points and a single reduction dimension of at least 65536 (upstream
    linalg::splitReduction: a recognised combiner with a neutral element, one result) is
    rewritten as partial reductions over interleaved chunks (as many as make about 32768
    threads, a divisor of the dimension) and a reduction of the partials. Anything else is left
    as it is. The order of the additions changes (a partial sum per chunk, then their sum),
    not what is computed.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect", "mlir::tensor::TensorDialect"];
}

def KforgeMapToGpuNaive : Pass<"kforge-map-to-gpu-naive", "mlir::ModuleOp"> {
  let summary = "Map every linalg op of a bufferized payload to its own naive GPU kernel";
  let description = [{
    The runner's reference for GPU candidates: the untransformed payload with one thread
    per point of each linalg op's parallel iteration space (256 threads a block), each
    thread running the op's reduction loops itself, in plain scalar code. Ops run as
    separate kernels in program order. Deliberately simple, so that a bug shared with a
    scheduled candidate is unlikely.

    Expects buffers (run after bufferization) and static loop bounds; an op with dynamic
    bounds is an error.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect", "mlir::scf::SCFDialect", "mlir::affine::AffineDialect",
                           "mlir::arith::ArithDialect", "mlir::memref::MemRefDialect"];
}

def KforgeVerifyCpuPayload : Pass<"kforge-verify-cpu-payload", "mlir::ModuleOp"> {
  let summary = "Reject GPU-mapped code on the CPU path";
  let description = [{
    The CPU pipeline runs schedules whose loops are still `scf.forall` (GPU mapping
    attributes are ignored there). A payload that already contains `gpu.launch`,
    `gpu.module` or `gpu.func` cannot run on the host; this pass reports it.
  }];
}

def KforgeVerifyLoweredToLLVM : Pass<"kforge-verify-lowered-to-llvm", "mlir::ModuleOp"> {
  let summary = "Check that a lowering left only what LLVM IR translation accepts";
  let description = [{
    Some upstream conversions leave an operation they cannot lower in place and still
    succeed (e.g. a synchronous `gpu.alloc` in gpu-to-llvm), which only surfaces later
    as a translation failure or, worse, not at all. Run at the end of kforge's
    pipelines, this pass reports every operation outside the LLVM dialect other than
    the module structure, `gpu.binary` and `gpu.launch_func`.
  }];
}

def KforgeVerifyNoForeignCode : Pass<"kforge-verify-no-foreign-code", "mlir::ModuleOp"> {
  let summary = "Refuse payload code that reaches outside the compiled kernels";
  let description = [{
    Runs first in kforge's lowering pipelines, on the payload as the schedule left
    it. kforge never puts these into a payload itself, so their presence means a
    payload or a schedule tried to smuggle code past the compiler: inline assembly
    (`llvm.inline_asm`; an empty one, the compiler memory barrier kforge's
    pipeline_rows emits, executes nothing and is allowed), module-level assembly
    (the `llvm.module_asm` attribute), calls to functions the module only declares
    (`func.call` / `llvm.call` of an external symbol other than kforge's runtime,
    `mgpu*` / `kforge*`, which TMA schedules call), indirect calls, and
    `llvm.call_intrinsic` by name. Each is
    reported with an error at the op and the pass fails. Inline assembly that the
    NVVM lowering emits later for kforge's own ops is not affected.

    kforge-compile runs it on every artifact; kforge's pipelines do not, so a
    module of your own (a test harness calling `printMemrefF32`) still lowers.
  }];
}

def KforgeVerifyArtifactCalls : Pass<"kforge-verify-artifact-calls", "mlir::ModuleOp"> {
  let summary = "Check that lowered host code calls only what an artifact may call";
  let description = [{
    Runs on the host module at the end of a lowering (kforge-compile runs it on
    every artifact). Host code may call the module's own functions, kforge's
    runtime (`mgpu*`, `kforge*`), the C allocator and memory functions the memref
    lowering uses (`malloc`, `free`, `aligned_alloc`, `memcpy`, `memmove`,
    `memset`) and the libm functions `convert-math-to-libm` emits. Anything else,
    an indirect call, inline assembly or module-level assembly is reported with an
    error and the pass fails. Device code is checked before lowering by
    `kforge-verify-no-foreign-code`.
  }];
}

def KforgeConfineTransformScripts : Pass<"kforge-confine-transform-scripts"> {
  let summary = "Refuse transform scripts that can reach outside the payload";
  let description = [{
    Checks every transform script the transform interpreter can see (scripts
    nested in the op it runs on, and the library that
    `transform-preload-library` loaded) against kforge's allowlist
    (kforge/Transforms/ScheduleConfinement.h): transform ops whose rewrites stay
    inside the payload, `apply_registered_pass` of passes that read and write
    nothing but the IR, `annotate` with kforge.* attributes only. Also refuses
    values that crash upstream ops (all-zero tile sizes, negative thread counts).
    Each refused op gets an error and the pass fails, so the interpreter never
    runs the script. kforge-opt inserts this pass before every
    `transform-interpreter` unless `--kforge-trusted` is given; with `trusted`
    only the crash guards apply.
  }];
  let options = [
    Option<"trusted", "trusted", "bool", /*default=*/"false",
           "Check only the guards against upstream crashes (hand-written recipes)">,
  ];
}

def KforgeDumpGpuBinaries : Pass<"kforge-dump-gpu-binaries", "mlir::ModuleOp"> {
  let summary = "Write every gpu.binary object to a file (PTX, cubin or fatbin)";
  let description = [{
    For each object of each `gpu.binary` op writes `<dir>/<binary>.<chip>.<ext>`, the
    extension being `ptx` for assembly, `cubin` for binary, `fatbin` for fatbin and
    `llvm.bc` for offload objects. The IR is not changed. The directory is created
    when missing. This is how PTX is inspected and FileCheck-ed.
  }];
  let options = [
    Option<"dir", "dir", "std::string", /*default=*/"\".\"",
           "Directory to write the binaries into">,
  ];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

#endif // KFORGE_TRANSFORMS_PASSES
