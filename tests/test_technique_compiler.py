"""Instructions nvcc emits for code that does not use a feature, and the technique rules that
must not take them for the student's use of it: the VOTEU that groups a warp's atomics into
one, the SHFL.IDX that hands the grouped atomic's result (or grid.sync()'s) to the other lanes,
and the "@!PT LDS" that pads fences and cp.async waits but never runs. The SASS is what nvcc
13.0 (-O3, sm_90) and the cuobjdump 13 wheel printed (addresses kept, encodings and unrelated
instructions cut); the last test compiles the same kernels when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, tools
from grader.manifest import Technique
from helpers import sass_inspection
from test_technique import verdict

# Compiles with nvcc and reads nothing the student template leaves out (pytest.ini).
pytestmark = pytest.mark.same_in_template

SASS = """
		Function : _Z12lane0_atomicPKiiPi
        /*00f0*/                   SHFL.DOWN PT, R3, R2, 0x10, 0x1f ;
        /*0120*/                   SHFL.DOWN PT, R0, R3, 0x8, 0x1f ;
        /*0140*/                   SHFL.DOWN PT, R5, R0, 0x4, 0x1f ;
        /*0160*/                   SHFL.DOWN PT, R4, R5, 0x2, 0x1f ;
        /*0180*/                   SHFL.DOWN PT, R7, R4, 0x1, 0x1f ;
        /*01c0*/                   S2R R0, SR_LANEID ;
        /*01d0*/                   VOTEU.ANY UR4, UPT, PT ;
        /*01e0*/                   REDUX.SUM UR5, R7 ;
        /*01f0*/                   UFLO.U32 UR4, UR4 ;
        /*0200*/                   ISETP.EQ.U32.AND P0, PT, R0, UR4, PT ;
        /*0220*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR6][R2.64], R5 ;
		Function : _Z14compact_atomicPKiiiPiS1_
        /*00c0*/                   LDG.E R7, desc[UR4][R2.64] ;
        /*00d0*/                   ISETP.GT.AND P0, PT, R7, UR6, PT ;
        /*00e0*/              @!P0 EXIT ;
        /*00f0*/                   S2R R5, SR_LANEID ;
        /*0100*/                   VOTEU.ANY UR6, UPT, PT ;
        /*0110*/                   LDC.64 R2, c[0x0][0x228] ;
        /*0120*/                   FLO.U32 R0, UR6 ;
        /*0130*/                   POPC R11, UR6 ;
        /*0140*/                   ISETP.EQ.U32.AND P0, PT, R0, R5, PT ;
        /*0150*/                   S2R R6, SR_LTMASK ;
        /*0160*/                   LDC.64 R4, c[0x0][0x220] ;
        /*0170*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R11 ;
        /*0180*/                   LOP3.LUT R6, R6, UR6, RZ, 0xc0, !PT ;
        /*0190*/                   POPC R6, R6 ;
        /*01a0*/                   SHFL.IDX PT, R9, R3, R0, 0x1f ;
        /*01b0*/                   IADD3 R9, R9, R6, RZ ;
        /*01c0*/                   IMAD.WIDE R4, R9, 0x4, R4 ;
        /*01d0*/                   STG.E desc[UR4][R4.64], R7 ;
		Function : _Z6grid_kPi
        /*0230*/                   STG.E desc[UR12][R4.64], R3 ;
        /*0290*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*02c0*/                   S2R R5, SR_LANEID ;
        /*02d0*/                   VOTEU.ANY UR18, UPT, PT ;
        /*02f0*/                   FLO.U32 R6, UR18 ;
        /*0350*/                   POPC R0, UR18 ;
        /*0390*/                   IMAD R7, R0, UR8, RZ ;
        /*03a0*/                   ISETP.EQ.U32.AND P0, PT, R6, R5, PT ;
        /*03b0*/                   MOV R5, UR14 ;
        /*03c0*/               @P0 MEMBAR.ALL.GPU ;
        /*03f0*/               @P0 ATOM.E.ADD.STRONG.GPU PT, R7, desc[UR12][R4.64+0x4], R7 ;
        /*0400*/                   S2R R8, SR_LTMASK ;
        /*0410*/                   LOP3.LUT R8, R8, UR18, RZ, 0xc0, !PT ;
        /*0420*/                   POPC R9, R8 ;
        /*0430*/                   SHFL.IDX PT, R0, R7, R6, 0x1f ;
        /*04b0*/                   WARPSYNC.ALL ;
        /*04c0*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
		Function : _Z16broadcast_resultPKiPi
        /*0090*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R11 ;
        /*00a0*/                   IMAD R3, R3, 0x2, RZ ;
        /*00b0*/                   SHFL.IDX PT, R9, R3, RZ, 0x1f ;
		Function : _Z11bcast_firstPKiPi
        /*0080*/                   LDG.E R3, desc[UR4][R2.64] ;
        /*0090*/                   SHFL.IDX PT, R5, R3, RZ, 0x1f ;
		Function : _Z10tile_any_kPKiPi
        /*0080*/                   ISETP.GT.AND P0, PT, R2, RZ, PT ;
        /*0090*/                   VOTE.ANY R7, PT, P0 ;
		Function : _Z10syncwarp_kPi
        /*0080*/                   WARPSYNC.ALL ;
		Function : _Z13k_threadfencePxPj
        /*0080*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0090*/              @!PT LDS RZ, [RZ] ;
        /*00a0*/              @!PT LDS RZ, [RZ] ;
        /*00b0*/              @!PT LDS RZ, [RZ] ;
        /*00c0*/              @!PT LDS RZ, [RZ] ;
        /*00d0*/                   MEMBAR.ALL.CTA ;
        /*00e0*/                   MEMBAR.SC.GPU ;
        /*0150*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R9 ;
"""


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(SASS)


def rule(kind: str, kernel: str) -> Technique:
    return Technique(name="r", rule=kind, points=10.0, kernel=kernel)


@pytest.mark.parametrize("name, shuffles, broadcasts", [
    ("_Z12lane0_atomicPKiiPi", 5, 0),          # the student's SHFL.DOWN reduction
    ("_Z14compact_atomicPKiiiPiS1_", 0, 1),    # out[atomicAdd(count, 1)] = v: nvcc's SHFL.IDX
    ("_Z6grid_kPi", 0, 1),                     # cg::this_grid().sync()
    ("_Z16broadcast_resultPKiPi", 1, 0),       # the atomic's result changed before the SHFL
    ("_Z11bcast_firstPKiPi", 1, 0)])           # __shfl_sync(full, v, 0) of a loaded value
def test_shuffles_that_hand_an_atomics_result_around_are_the_compilers(found, name, shuffles,
                                                                        broadcasts):
    function = found.functions[name]
    assert (function.shuffles, function.atomic_broadcasts) == (shuffles, broadcasts)
    assert function.ops["SHFL"] == shuffles + broadcasts


def test_uses_shuffle_fails_on_the_compilers_shuffles_alone(found):
    ok, text = verdict(found, rule("uses_shuffle", "compact_atomic"))
    assert not ok and text.endswith(
        "found none: its only SHFLs (SHFL.IDX) hand an atomic's result to the warp's other "
        "lanes, which nvcc emits when it groups a warp's atomics into one (and for "
        "grid.sync()); none exchanges values of yours")
    assert not verdict(found, rule("uses_shuffle", "grid_k"))[0]
    ok, text = verdict(found, rule("uses_shuffle", "lane0_atomic"))
    assert ok and text.endswith("found 5 SHFLs in _Z12lane0_atomicPKiiPi")


@pytest.mark.parametrize("name", ["_Z12lane0_atomicPKiiPi", "_Z14compact_atomicPKiiiPiS1_",
                                  "_Z6grid_kPi"])
def test_the_compilers_votes_read_the_active_mask_only(found, name):
    # A lane-0 guard around an atomicAdd, an atomic whose result is used, grid.sync(): nvcc
    # emits VOTEU.ANY URn, UPT, PT (the active mask), never a vote on the student's predicate.
    assert found.functions[name].ops["VOTEU"] == 1 and found.functions[name].votes == 0
    ok, text = verdict(found, rule("uses_warp_vote", name))
    assert not ok and "its VOTEs only read the active mask, which is how nvcc groups a warp's " \
                      "atomics" in text


def test_a_vote_on_a_predicate_still_counts(found):
    # cg::tiled_partition<32>(block).ballot(x > 0): a vote of the student's, through CG.
    ok, text = verdict(found, rule("uses_warp_vote", "tile_any"))
    assert ok and text.endswith("found 1 vote in _Z10tile_any_kPKiPi")


def test_instructions_that_never_run_count_for_nothing(found):
    # -rdc pads every __threadfence() with four @!PT LDS: no shared memory, though LDS shows.
    fenced = found.functions["_Z13k_threadfencePxPj"]
    assert "LDS" not in fenced.ops and fenced.fences == 1
    ok, text = verdict(found, rule("uses_shared_memory", "k_threadfence"))
    assert not ok and text.endswith("found none: the kernel reads and writes global memory only "
                                    "(LDG/STG)")
    assert verdict(found, Technique(name="f", rule="uses_memory_fence", points=1.0,
                                    kernel="k_threadfence"))[0]


# --------------------------------------------------------------------------- the toolkit

KERNELS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void lane0_atomic(const int* in, int n, int* count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) atomicAdd(count, v);
}
__global__ void pred_atomic(const int* in, int n, int t, int* count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && in[i] > t) atomicAdd(count, 1);
}
__global__ void compact_atomic(const int* in, int n, int t, int* out, int* count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { int v = in[i]; if (v > t) out[atomicAdd(count, 1)] = v; }
}
__global__ void grid_k(int* p) {
  auto g = cg::this_grid(); p[g.thread_rank()] = 1; g.sync(); p[0] += p[1]; }
__global__ void coalesced_k(const int* in, int* out) {
  if (in[threadIdx.x] > 0) out[threadIdx.x] = cg::coalesced_threads().thread_rank(); }
__global__ void ballot_k(const int* in, unsigned* out) {
  out[threadIdx.x] = __ballot_sync(0xffffffffu, in[threadIdx.x] > 0); }
__global__ void fenced_k(long long* p, unsigned* c) {
  p[blockIdx.x] = 1; __threadfence(); p[gridDim.x] = atomicAdd(c, 1u); }
"""


@pytest.mark.parametrize("flags", [[], ["-rdc=true"]], ids=["whole", "rdc"])
def test_the_toolkit_emits_what_the_rules_discount(tmp_path, flags):
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    cuobjdump = tools.find("cuobjdump")
    if nvcc is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump")
    (tmp_path / "k.cu").write_text(KERNELS)
    obj = tmp_path / "k.o"
    subprocess.run([nvcc, "-c", "-O3", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    *flags, "-o", str(obj), str(tmp_path / "k.cu")],
                   check=True, capture_output=True, timeout=300)
    f = binary.Inspection()
    binary.parse_symbols(subprocess.run([cuobjdump, "-symbols", str(obj)], check=True,
                                           capture_output=True, text=True).stdout, f)
    binary.parse_sass(subprocess.run([cuobjdump, "-sass", str(obj)], check=True,
                                        capture_output=True, text=True).stdout, f)
    by_kernel = {name.split("P")[0].lstrip("_Z0123456789"): fn
                 for name, fn in f.functions.items() if fn.kernel}
    votes = {k: (fn.votes, fn.ops.get("VOTE", 0) + fn.ops.get("VOTEU", 0))
             for k, fn in by_kernel.items()}
    # Every kernel shows a VOTE or VOTEU; only ballot_k's votes on a predicate.
    assert votes == {"lane0_atomic": (0, 1), "pred_atomic": (0, 1), "compact_atomic": (0, 1),
                     "grid_k": (0, 1), "coalesced_k": (0, 1), "ballot_k": (1, 1),
                     "fenced_k": (0, 1)}
    shuffles = {k: (fn.shuffles, fn.atomic_broadcasts) for k, fn in by_kernel.items()
                if fn.ops.get("SHFL")}
    assert shuffles == {"lane0_atomic": (5, 0), "compact_atomic": (0, 1), "grid_k": (0, 1),
                        "fenced_k": (0, 1)}
    assert not any(fn.ops.get("LDS") for fn in by_kernel.values())
