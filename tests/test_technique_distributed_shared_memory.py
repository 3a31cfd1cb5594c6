"""The uses_distributed_shared_memory technique rule: which SASS counts as an access to another
block's shared memory in a thread-block cluster, where the cluster barriers must stand around it,
and what the verdict says of kernels that keep to their own shared memory. The SASS is what nvcc
13.0 (-O3, sm_90) and the cuobjdump 13 wheel printed for the kernels of KERNELS below and a few
more (addresses kept, encodings and the instructions that neither write nor move a mapped address
cut); _Z9reuse_mapPj is written by hand. cluster.map_shared_rank (PTX mapa) compiles to PRMT Rd,
Rrank, 0x654, Raddr on sm_90, and the access through the result to a generic LD/ST/ATOM; the last
test compiles KERNELS when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, tools
from grader.manifest import Technique
from helpers import sass_inspection
from test_technique import verdict

SASS = """
		Function : _Z7neitherPKjiPj
        /*00d0*/                   STS [R4], RZ ;
        /*0160*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*01e0*/                   S2R R5, SR_SWINHI ;
        /*0250*/                   LDG.E R4, desc[UR8][R4.64] ;
        /*02a0*/                   PRMT R8, R9, 0x654, R6 ;
        /*02b0*/                   MOV R9, R7 ;
        /*02c0*/                   IADD3 R8, P1, R8, R13, RZ ;
        /*02d0*/                   IMAD.MOV.U32 R13, RZ, RZ, 0x1 ;
        /*02e0*/                   IMAD.X R9, RZ, RZ, R9, P1 ;
        /*0300*/                   ATOM.E.ADD.STRONG.GPU PT, RZ, desc[UR8][R8.64], R13 ;
        /*0330*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*03b0*/                   LDS R7, [R7] ;
        /*0410*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R7 ;
		Function : _Z8no_finalPKjiPj
        /*00e0*/                   STS [R4], RZ ;
        /*0170*/                   UCGABAR_ARV ;
        /*01b0*/                   UCGABAR_WAIT ;
        /*01e0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*02b0*/                   S2R R5, SR_SWINHI ;
        /*0320*/                   LDG.E R4, desc[UR8][R4.64] ;
        /*0370*/                   PRMT R8, R9, 0x654, R6 ;
        /*0380*/                   MOV R9, R7 ;
        /*0390*/                   IADD3 R8, P1, R8, R13, RZ ;
        /*03a0*/                   IMAD.MOV.U32 R13, RZ, RZ, 0x1 ;
        /*03b0*/                   IMAD.X R9, RZ, RZ, R9, P1 ;
        /*03d0*/                   ATOM.E.ADD.STRONG.GPU PT, RZ, desc[UR8][R8.64], R13 ;
        /*0400*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0480*/                   LDS R7, [R7] ;
        /*04e0*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R7 ;
		Function : _Z8no_firstPKjiPj
        /*00e0*/                   STS [R4], RZ ;
        /*0170*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0200*/                   S2R R5, SR_SWINHI ;
        /*0270*/                   LDG.E R4, desc[UR8][R4.64] ;
        /*02c0*/                   PRMT R8, R9, 0x654, R6 ;
        /*02d0*/                   MOV R9, R7 ;
        /*02e0*/                   IADD3 R8, P2, R8, R13, RZ ;
        /*02f0*/                   IMAD.MOV.U32 R13, RZ, RZ, 0x1 ;
        /*0300*/                   IMAD.X R9, RZ, RZ, R9, P2 ;
        /*0320*/                   ATOM.E.ADD.STRONG.GPU PT, RZ, desc[UR8][R8.64], R13 ;
        /*0390*/                   UCGABAR_ARV ;
        /*03d0*/                   UCGABAR_WAIT ;
        /*0400*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0480*/                   LDS R7, [R7] ;
        /*04e0*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R7 ;
		Function : _Z4bothPKjiPj
        /*00e0*/                   STS [R4], RZ ;
        /*0170*/                   UCGABAR_ARV ;
        /*01b0*/                   UCGABAR_WAIT ;
        /*01e0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*02b0*/                   S2R R5, SR_SWINHI ;
        /*0320*/                   LDG.E R4, desc[UR8][R4.64] ;
        /*0370*/                   PRMT R8, R9, 0x654, R6 ;
        /*0380*/                   MOV R9, R7 ;
        /*0390*/                   IADD3 R8, P2, R8, R13, RZ ;
        /*03a0*/                   IMAD.MOV.U32 R13, RZ, RZ, 0x1 ;
        /*03b0*/                   IMAD.X R9, RZ, RZ, R9, P2 ;
        /*03d0*/                   ATOM.E.ADD.STRONG.GPU PT, RZ, desc[UR8][R8.64], R13 ;
        /*0440*/                   UCGABAR_ARV ;
        /*0480*/                   UCGABAR_WAIT ;
        /*04b0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0530*/                   LDS R7, [R7] ;
        /*0590*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R7 ;
		Function : _Z9sync_onlyPj
        /*0090*/                   STS [R0], R5 ;
        /*00e0*/                   UCGABAR_ARV ;
        /*0120*/                   UCGABAR_WAIT ;
        /*0150*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*01a0*/                   LDS R0, [R0] ;
        /*01f0*/                   STG.E desc[UR6][R2.64], R5 ;
		Function : _Z10block_histPKjiPji
        /*00e0*/                   STS [R2], RZ ;
        /*0170*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0220*/                   LDG.E R2, desc[UR8][R2.64] ;
        /*0260*/                   ATOMS.POPC.INC.32 RZ, [R6+URZ] ;
        /*0290*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0320*/                   LDS R9, [R0] ;
        /*0360*/                   REDG.E.ADD.STRONG.GPU desc[UR8][R2.64], R9 ;
		Function : _Z11remote_readPj
        /*0090*/                   STS [R3], R0 ;
        /*00e0*/                   UCGABAR_ARV ;
        /*0120*/                   UCGABAR_WAIT ;
        /*0150*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*01c0*/                   S2R R4, SR_SWINHI ;
        /*02d0*/                   PRMT R2, R7, 0x654, R2 ;
        /*02e0*/                   MOV R3, R3 ;
        /*02f0*/                   IMAD.WIDE.U32 R2, R5, 0x4, R2 ;
        /*0310*/                   LD.E R3, desc[UR4][R2.64] ;
        /*0360*/                   STG.E desc[UR4][R4.64], R3 ;
        /*03b0*/                   UCGABAR_ARV ;
        /*03f0*/                   UCGABAR_WAIT ;
        /*0420*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
		Function : _Z13generic_localPjPKj
        /*0090*/                   STS [R0], RZ ;
        /*00a0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*00b0*/                   LDG.E R2, desc[UR8][R2.64] ;
        /*00c0*/                   S2UR UR6, SR_SWINHI ;
        /*0140*/                   CALL.REL.NOINC 0x1b0 ;
        /*0150*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0170*/                   LDS R5, [R0] ;
        /*0190*/                   STG.E desc[UR8][R2.64], R5 ;
        /*01e0*/                   ATOMS.POPC.INC.32 RZ, [R4+URZ] ;
		Function : _Z11ptx_atom_ldPjPKj
        /*0090*/                   STS [R0], RZ ;
        /*00d0*/                   UCGABAR_ARV ;
        /*00e0*/                   UCGABAR_WAIT ;
        /*0100*/                   LDG.E R2, desc[UR6][R2.64] ;
        /*0120*/                   S2R R7, SR_SWINHI ;
        /*0180*/                   PRMT R4, R5, 0x654, R4 ;
        /*0190*/                   MOV R4, R4 ;
        /*01a0*/                   MOV R5, R7 ;
        /*01b0*/                   ATOM.E.ADD.STRONG.GPU PT, R6, [R4], R13 ;
        /*01c0*/                   LD.E R7, [R4] ;
        /*01f0*/                   ST.E [R4], R7 ;
        /*0230*/                   UCGABAR_ARV ;
        /*0240*/                   UCGABAR_WAIT ;
        /*0260*/                   LDS R9, [R0] ;
        /*0290*/                   STG.E desc[UR6][R2.64], R9 ;
		Function : _Z12global_countPKjiPj
        /*00e0*/                   LDG.E R3, desc[UR6][R2.64] ;
        /*0130*/                   REDG.E.ADD.STRONG.GPU desc[UR6][R4.64], R11 ;
		Function : _Z9reuse_mapPj
        /*0010*/                   S2R R5, SR_SWINHI ;
        /*0020*/                   PRMT R4, R7, 0x654, R4 ;
        /*0030*/                   UCGABAR_ARV ;
        /*0040*/                   UCGABAR_WAIT ;
        /*0050*/                   IMAD.WIDE R4, R9, 0x4, R2 ;
        /*0060*/                   LD.E R5, desc[UR4][R4.64] ;
        /*0070*/                   UCGABAR_ARV ;
        /*0080*/                   UCGABAR_WAIT ;
"""


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(SASS)


def check(found, kernel):
    return verdict(found, Technique(name="distributed_shared_memory",
                                    rule="uses_distributed_shared_memory", points=10.0,
                                    kernel=kernel))


@pytest.mark.parametrize("name, count", [
    ("_Z4bothPKjiPj", 1),             # atomicAdd through cluster.map_shared_rank
    ("_Z8no_firstPKjiPj", 1),
    ("_Z8no_finalPKjiPj", 1),
    ("_Z7neitherPKjiPj", 1),
    ("_Z11remote_readPj", 1),         # a plain read of another block's word: LD
    ("_Z11ptx_atom_ldPjPKj", 3),      # mapa.shared::cluster, then atom/ld/st.shared::cluster
    ("_Z9reuse_mapPj", 0),            # the mapped register overwritten before the load
    ("_Z13generic_localPjPKj", 0),    # a generic pointer to the block's own shared memory
    ("_Z10block_histPKjiPji", 0),     # ATOMS on the block's own table
    ("_Z9sync_onlyPj", 0),
    ("_Z12global_countPKjiPj", 0)])
def test_parse_sass_counts_accesses_through_mapped_addresses(found, name, count):
    assert found.functions[name].cluster_accesses == count


def test_an_access_between_cluster_barriers_meets_the_rule(found):
    ok, text = check(found, "both")
    assert ok and text.endswith("found 1 access to distributed shared memory in _Z4bothPKjiPj")
    ok, text = check(found, "ptx_atom_ld")
    assert ok and text.endswith("found 3 accesses to distributed shared memory in "
                                "_Z11ptx_atom_ldPjPKj")
    assert check(found, "remote_read")[0]


def test_a_missing_final_barrier_fails_and_says_where(found):
    ok, text = check(found, "no_final")
    assert not ok
    assert text.startswith("expected accesses to other blocks' shared memory through "
                           "cluster.map_shared_rank")
    assert text.endswith("found none: no cluster barrier follows its 1 access to other blocks' "
                         "shared memory, so a block may read its slice and exit while another "
                         "is still adding to it; cluster.sync() belongs after the last update, "
                         "before the slices are read")


def test_a_missing_first_barrier_or_both_fail(found):
    ok, text = check(found, "no_first")
    assert not ok and "found none: its 1 access to other blocks' shared memory comes before " \
                      "any cluster barrier" in text
    ok, text = check(found, "neither")
    assert not ok and "found none: its 1 access to other blocks' shared memory comes with no " \
                      "cluster barrier (UCGABAR_WAIT: cluster.sync())" in text


def test_kernels_that_keep_to_their_own_shared_memory_say_what_they_do(found):
    ok, text = check(found, "block_hist")
    assert not ok and text.endswith("found none: each block counts in its own shared memory "
                                    "only (LDS/STS/ATOMS), with no address mapped to another "
                                    "block of a cluster (cluster.map_shared_rank)")
    ok, text = check(found, "sync_only")
    assert not ok and text.endswith("found none: the kernel synchronises its cluster "
                                    "(cluster.sync()) but each block touches only its own "
                                    "shared memory; no address is mapped to another block "
                                    "(cluster.map_shared_rank)")
    ok, text = check(found, "global_count")
    assert not ok and text.endswith("found none: the kernel counts with global atomics "
                                    "(ATOMG/REDG), not in shared memory")
    assert not check(found, "generic_local")[0]
    assert not check(found, "reuse_map")[0]


# --------------------------------------------------------------------------- the toolkit

KERNELS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
#define ZERO extern __shared__ unsigned slice[]; \
  cg::cluster_group cluster = cg::this_cluster(); \
  for (int b = threadIdx.x; b < 1024; b += blockDim.x) slice[b] = 0;
#define COUNT for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; \
                    i += gridDim.x * blockDim.x) { \
    unsigned v = in[i]; \
    atomicAdd(cluster.map_shared_rank(slice, (int)(v >> 10)) + (v & 1023), 1u); }
#define MERGE for (int b = threadIdx.x; b < 1024; b += blockDim.x) \
    if (slice[b]) atomicAdd(&bins[cluster.block_rank() * 1024 + b], slice[b]);
__global__ void both(const unsigned* in, int n, unsigned* bins) {
  ZERO cluster.sync(); COUNT cluster.sync(); MERGE }
__global__ void no_first(const unsigned* in, int n, unsigned* bins) {
  ZERO __syncthreads(); COUNT cluster.sync(); MERGE }
__global__ void no_final(const unsigned* in, int n, unsigned* bins) {
  ZERO cluster.sync(); COUNT __syncthreads(); MERGE }
__global__ void block_hist(const unsigned* in, int n, unsigned* bins) {
  extern __shared__ unsigned table[];
  for (int b = threadIdx.x; b < 1024; b += blockDim.x) table[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&table[in[i] & 1023], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < 1024; b += blockDim.x)
    if (table[b]) atomicAdd(&bins[b], table[b]);
}
"""


@pytest.mark.same_in_template
def test_the_toolkit_compiles_map_shared_rank_to_a_mapped_generic_access(tmp_path):
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
    assert {k: fn.cluster_accesses for k, fn in by_kernel.items()} == {
        "both": 1, "no_first": 1, "no_final": 1, "block_hist": 0}
    for kernel, met in (("both", True), ("no_first", False), ("no_final", False),
                        ("block_hist", False)):
        assert check(f, kernel)[0] is met, kernel
