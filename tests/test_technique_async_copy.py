"""The uses_async_copy technique rule: which SASS counts as an asynchronous copy from global into
shared memory (LDGSTS from cp.async in its three spellings, and Hopper's bulk and tensor copies),
and what the verdict says of a kernel that stages shared memory through registers instead. The
SASS is what nvcc 13.0 (-O3, sm_90) and the cuobjdump 13 wheel printed for the kernels of
KERNELS below and a TMA load (addresses kept, encodings and unrelated instructions cut); the
last test compiles KERNELS when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, tools
from grader.manifest import Technique
from helpers import sass_inspection
from test_technique import verdict

SASS = """
		Function : _Z9sync_copyPK6float4Pf
        /*0050*/                   LDG.E.128 R8, desc[UR6][R2.64] ;
        /*00e0*/                   STS.128 [R0], R8 ;
        /*0100*/                   LDS R7, [R6+0x8] ;
		Function : _Z9bulk_copyPKfPf
        /*0170*/                   SYNCS.EXCH.64 URZ, [UR6], UR4 ;
        /*0260*/                   UBLKCP.S.G [UR4], [UR6], UR8 ;
        /*02b0*/                   SYNCS.ARRIVE.TRANS64.RED.A0TR RZ, [UR5], R0 ;
        /*0540*/                   LDS R5, [R0] ;
		Function : _Z8ptx_copyPK6float4Pf
        /*00b0*/              @!PT LDS RZ, [RZ] ;
        /*00c0*/              @!PT LDS RZ, [RZ] ;
        /*00d0*/              @!PT LDS RZ, [RZ] ;
        /*00e0*/                   LDGSTS.E.BYPASS.128 [R7], desc[UR6][R2.64] ;
        /*0110*/                   LDGDEPBAR ;
        /*0120*/                   DEPBAR.LE SB0, 0x0 ;
        /*0140*/                   LDS R9, [R0+0x4] ;
		Function : _Z9prim_copyPKfPf
        /*00e0*/                   LDGSTS.E [R7], desc[UR6][R2.64] ;
        /*0110*/                   LDGDEPBAR ;
        /*0120*/                   DEPBAR.LE SB0, 0x0 ;
        /*0140*/                   LDS R9, [R0] ;
		Function : _Z9pipe_copyPK6float4Pf
        /*00e0*/                   LDGSTS.E.BYPASS.128 [R7], desc[UR6][R2.64] ;
        /*00f0*/                   LDGSTS.E.BYPASS.128 [R7+0x1000], desc[UR6][R4.64] ;
        /*0110*/                   LDGDEPBAR ;
        /*0120*/                   DEPBAR.LE SB0, 0x0 ;
        /*0140*/                   LDS R9, [R0] ;
		Function : _Z8tma_copy14CUtensorMap_stPf
        /*0190*/                   UTMALDG.2D [UR8], [UR4] ;
		Function : _Z9bulk_storePf
        /*0200*/                   STS [R3], R2 ;
        /*0260*/                   UBLKCP.G.S [UR6], [UR4], UR8 ;
		Function : _Z10plain_copyPKfPf
        /*0080*/                   LDG.E R3, desc[UR4][R2.64] ;
        /*0090*/                   STG.E desc[UR4][R4.64], R3 ;
"""


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(SASS)


def check(found, kernel):
    return verdict(found, Technique(name="async_copy", rule="uses_async_copy", points=10.0,
                                    kernel=kernel))


@pytest.mark.parametrize("name, count", [
    ("_Z9pipe_copyPK6float4Pf", 2),          # cuda::memcpy_async, per-thread cuda::pipeline
    ("_Z9prim_copyPKfPf", 1),                # __pipeline_memcpy_async of 4 bytes
    ("_Z8ptx_copyPK6float4Pf", 1),           # inline PTX cp.async.cg, 16 bytes
    ("_Z9bulk_copyPKfPf", 1),                # cuda::memcpy_async to a block's cuda::barrier
    ("_Z8tma_copy14CUtensorMap_stPf", 1),    # cp.async.bulk.tensor (TMA) into shared memory
    ("_Z9bulk_storePf", 0),                  # a bulk copy out of shared memory
    ("_Z9sync_copyPK6float4Pf", 0),          # LDG then STS: through registers
    ("_Z10plain_copyPKfPf", 0)])
def test_parse_sass_counts_copies_into_shared_memory(found, name, count):
    assert found.functions[name].async_copies == count


def test_an_async_copy_meets_the_rule(found):
    ok, text = check(found, "pipe_copy")
    assert ok and text.endswith("found 2 asynchronous copies in _Z9pipe_copyPK6float4Pf")
    ok, text = check(found, "ptx_copy")
    assert ok and text.endswith("found 1 asynchronous copy in _Z8ptx_copyPK6float4Pf")
    assert check(found, "tma_copy")[0] and check(found, "bulk_copy")[0]


def test_staging_through_registers_fails_and_says_so(found):
    ok, text = check(found, "sync_copy")
    assert not ok
    assert text.startswith("expected asynchronous global-to-shared copies (LDGSTS: cp.async, ")
    assert text.endswith("found none: the kernel stages its tiles through registers (LDG, then "
                         "STS), which holds each thread until the load lands")


def test_other_kernels_without_copies_say_what_they_do(found):
    ok, text = check(found, "bulk_store")
    assert not ok and text.endswith("found none: the kernel fills shared memory with plain "
                                    "stores (STS)")
    ok, text = check(found, "plain_copy")
    assert not ok and text.endswith("found none: the kernel does not use shared memory")


# --------------------------------------------------------------------------- the toolkit

KERNELS = r"""
#include <cuda/pipeline>
#include <cuda_pipeline.h>
__global__ void pipe_copy(const float4* in, float* out) {
  __shared__ alignas(16) float4 s[256];
  auto pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&s[threadIdx.x], &in[threadIdx.x], cuda::aligned_size_t<16>(16), pipe);
  pipe.producer_commit();
  pipe.consumer_wait();
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x].x;
}
__global__ void prim_copy(const float* in, float* out) {
  __shared__ alignas(16) float s[256];
  __pipeline_memcpy_async(&s[threadIdx.x], &in[threadIdx.x], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x];
}
__global__ void ptx_copy(const float4* in, float* out) {
  __shared__ alignas(16) float4 s[256];
  unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(&s[threadIdx.x]));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
               :: "r"(dst), "l"(in + threadIdx.x), "r"(16));
  asm volatile("cp.async.commit_group;\n" ::: "memory");
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x].y;
}
__global__ void sync_copy(const float4* in, float* out) {
  __shared__ alignas(16) float4 s[256];
  s[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  out[threadIdx.x] = s[255 - threadIdx.x].z;
}
"""


@pytest.mark.same_in_template
def test_the_toolkit_compiles_cp_async_to_ldgsts(tmp_path):
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    cuobjdump = tools.find("cuobjdump")
    if nvcc is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump")
    (tmp_path / "k.cu").write_text(KERNELS)
    obj = tmp_path / "k.o"
    subprocess.run([nvcc, "-c", "-O3", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    "-o", str(obj), str(tmp_path / "k.cu")],
                   check=True, capture_output=True, timeout=300)
    f = binary.Inspection()
    binary.parse_symbols(subprocess.run([cuobjdump, "-symbols", str(obj)], check=True,
                                        capture_output=True, text=True).stdout, f)
    binary.parse_sass(subprocess.run([cuobjdump, "-sass", str(obj)], check=True,
                                     capture_output=True, text=True).stdout, f)
    by_kernel = {name.split("P")[0].lstrip("_Z0123456789"): fn
                 for name, fn in f.functions.items() if fn.kernel}
    assert {k: fn.async_copies for k, fn in by_kernel.items()} == {
        "pipe_copy": 1, "prim_copy": 1, "ptx_copy": 1, "sync_copy": 0}
    for kernel, met in (("pipe_copy", True), ("prim_copy", True), ("ptx_copy", True),
                        ("sync_copy", False)):
        assert check(f, kernel)[0] is met, kernel
