"""The uses_memory_fence technique rule: which SASS counts as a device-scope fence, that it
must stand between the store of the data and the atomic that publishes it (in program order,
through called functions), what the verdict says when there is none or it stands elsewhere,
the rule in a manifest, and how single_pass_reduce scores a kernel without one. The SASS below
is what nvcc 13.0 and the cuobjdump 13 wheel printed for sm_90 (addresses kept, encodings cut);
the last tests compile the same kernels when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, manifest, scoring, tools
from grader.errors import ManifestError
from grader.manifest import Technique, load_manifest
from grader.model import ExerciseStatus, StageResult, StageStatus
from grader.stages import technique
from helpers import ROOT, sass_inspection
from test_manifest import VALID, write
from test_technique import verdict

# Compiles with nvcc and reads nothing the student template leaves out (pytest.ini).
pytestmark = pytest.mark.same_in_template

# One kernel per way of fencing (or not) between a block's store and its ticket.
FENCE_SASS = """
		Function : _Z13k_threadfencePxPjPi
        /*0080*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0090*/                   MEMBAR.SC.GPU ;
        /*00a0*/                   ERRBAR;
        /*00b0*/                   CGAERRBAR ;
        /*00c0*/                   CCTL.IVALL ;
        /*0120*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R9 ;
		Function : _Z8k_systemPxPjPi
        /*0080*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0090*/                   MEMBAR.SC.SYS ;
        /*0120*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R9 ;
		Function : _Z12k_ref_acqrelPxPjPi
        /*0090*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*00e0*/               @P0 MEMBAR.ALL.GPU ;
        /*00f0*/               @P0 ERRBAR;
        /*0110*/               @P0 ATOM.E.ADD.STRONG.GPU PT, R5, desc[UR4][R4.64], R13 ;
        /*0120*/               @P0 CCTL.IVALL ;
		Function : _Z7k_blockPxPjPi
        /*0090*/                   MEMBAR.SC.CTA ;
        /*00f0*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R9 ;
		Function : _Z17k_block_scope_refPxPjPi
        /*00e0*/               @P0 MEMBAR.ALL.CTA ;
        /*00f0*/               @P0 ATOM.E.ADD.STRONG.SM PT, R5, desc[UR4][R4.64], R13 ;
		Function : _Z13k_ref_acquirePxPjPi
        /*00e0*/               @P0 ATOM.E.ADD.STRONG.GPU PT, R5, desc[UR4][R4.64], R13 ;
        /*00f0*/               @P0 CCTL.IVALL ;
		Function : _Z6k_nonePxPjPi
        /*00e0*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R4.64], R13 ;
		Function : _Z5k_redPj
        /*0080*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;
		Function : _Z9k_proxy_gPx
        /*0050*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0060*/                   FENCE.VIEW.ASYNC.G ;
		Function : _Z7k_storePx
        /*0050*/                   STG.E.64 desc[UR4][R2.64], R4 ;
		Function : _Z13k_fence_afterPxPjPi
        /*00f0*/                   STG.E.64 desc[UR4][R2.64], R8 ;
        /*0100*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R4.64], R13 ;
        /*0160*/                   MEMBAR.SC.GPU ;
        /*0170*/                   ERRBAR;
        /*0190*/                   CCTL.IVALL ;
        /*01a0*/                   STG.E desc[UR4][R6.64], R11 ;
		Function : _Z20k_fence_before_storePxPjPi
        /*0030*/                   MEMBAR.SC.GPU ;
        /*0040*/                   ERRBAR;
        /*0060*/                   CCTL.IVALL ;
        /*00e0*/               @P0 ATOMG.E.ADD.STRONG.GPU PT, R3, desc[UR4][R2.64], R9 ;
        /*0160*/                   STG.E.64 desc[UR4][R6.64], R4 ;
"""


FOUND_ORDER = sass_inspection(FENCE_SASS)


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(FENCE_SASS)


def rule(name="memory_fence", kernel="", **fields) -> Technique:
    return Technique(name=name, rule="uses_memory_fence", points=10.0, kernel=kernel, **fields)


@pytest.mark.parametrize("name, fences, block_fences", [
    ("_Z13k_threadfencePxPjPi", 1, 0),      # __threadfence(): MEMBAR.SC.GPU
    ("_Z8k_systemPxPjPi", 1, 0),            # __threadfence_system(): MEMBAR.SC.SYS
    ("_Z12k_ref_acqrelPxPjPi", 1, 0),       # atomic_ref<device> acq_rel: @P0 MEMBAR.ALL.GPU
    ("_Z7k_blockPxPjPi", 0, 1),             # __threadfence_block(): MEMBAR.SC.CTA
    ("_Z17k_block_scope_refPxPjPi", 0, 1),  # atomic_ref<block> acq_rel: MEMBAR.ALL.CTA
    ("_Z13k_ref_acquirePxPjPi", 0, 0),      # acquire only: CCTL.IVALL, no MEMBAR
    ("_Z9k_proxy_gPx", 0, 0),               # fence.proxy.async.global: FENCE.VIEW.ASYNC.G
    ("_Z13k_fence_afterPxPjPi", 1, 0)])     # a fence, though in the wrong place
def test_parse_sass_counts_fences_by_scope(found, name, fences, block_fences):
    function = found.functions[name]
    assert (function.fences, function.block_fences) == (fences, block_fences)


def test_membar_spelled_before_volta_counts():
    f = binary.Inspection()
    binary.parse_sass("\t\tFunction : _Z1kv\n        /*0090*/   MEMBAR.GL ;\n"
                         "        /*00a0*/   MEMBAR.CTA ;\n", f)
    assert (f.functions["_Z1kv"].fences, f.functions["_Z1kv"].block_fences) == (1, 1)


@pytest.mark.parametrize("name", ["_Z13k_threadfencePxPjPi", "_Z8k_systemPxPjPi",
                                  "_Z12k_ref_acqrelPxPjPi"])
def test_device_and_system_fences_meet_the_rule(found, name):
    ok, text = verdict(found, rule(kernel=name))
    assert ok and text.endswith(f"found 1 device-scope fence in {name}")


def test_expected_names_the_fence_and_its_sources(found):
    _, text = verdict(found, rule(kernel="k_threadfence"))
    assert text.startswith("expected a device-scope memory fence (MEMBAR.GPU or MEMBAR.SYS: "
                           "__threadfence(), __threadfence_system(), or a release atomic_ref "
                           "at device scope) between the global store of the data and the "
                           "global atomic that publishes it in kernel _Z13k_threadfencePxPjPi")


@pytest.mark.parametrize("kernel, instead", [
    ("_Z7k_block", "its only fences are block-scope (MEMBAR.CTA: __threadfence_block() "
                          "or a thread_scope_block atomic), which order nothing for other blocks"),
    ("k_block_scope_ref", "its only fences are block-scope"),
    ("k_ref_acquire", "the kernel acquires (CCTL.IVALL after an acquire load or atomic) but "
                      "never releases"),
    ("k_none", "its atomics (ATOMG/REDG) are relaxed: atomicAdd orders no other store"),
    ("k_red", "its atomics (ATOMG/REDG) are relaxed"),
    ("k_proxy_g", "FENCE.VIEW.ASYNC orders a thread's accesses with the async proxy"),
    ("k_fence_after", "its device-scope fence comes after its last global atomic, so the "
                      "atomic that publishes the data (the ticket) may reach other blocks "
                      "before the data does"),
    ("k_fence_before_store", "its device-scope fence comes before any global store, so it "
                             "orders no data before the atomic that publishes it")])
def test_no_device_scope_fence_fails_and_says_what_is_there(found, kernel, instead):
    ok, text = verdict(found, rule(kernel=kernel))
    assert not ok and f"; found none: {instead}" in text


def test_a_kernel_with_no_atomic_and_no_fence_gets_no_explanation(found):
    ok, text = verdict(found, rule(kernel="k_store"))
    assert not ok and text.endswith("; found none")


def test_one_fenced_kernel_among_several_is_enough(found):
    # Like every uses_* rule: met when some selected kernel shows it.
    ok, text = verdict(found, rule(kernel="k_none|k_threadfence"))
    assert ok and "1 device-scope fence in _Z13k_threadfencePxPjPi" in text


def test_a_fence_after_the_publishing_atomic_fails():
    # The partial stored, the ticket drawn, then the fence: the ticket may reach the last
    # block before the partial. A fence exists, so the old count-only rule passed this.
    assert technique.placed_fences(FOUND_ORDER.functions["_Z13k_fence_afterPxPjPi"],
                                   FOUND_ORDER) == 0
    ok, text = verdict(FOUND_ORDER, rule(kernel="k_fence_after"))
    assert not ok and "found none: its device-scope fence comes after its last global atomic" \
        in text


def test_one_well_placed_fence_is_enough_whatever_else_the_kernel_fences():
    # single_pass_reduce's pattern: release fence before the ticket, acquire fence after it.
    f = sass_inspection("""
		Function : _Z18single_pass_kernelPKiiPxPjS1_
        /*0870*/                   STG.E.64 desc[UR8][R6.64], R10 ;
        /*0880*/                   MEMBAR.SC.GPU ;
        /*08c0*/                   ATOMG.E.ADD.STRONG.GPU PT, R8, desc[UR8][R8.64], R13 ;
        /*0940*/                   MEMBAR.SC.GPU ;
        /*11b0*/                   STG.E.64 desc[UR8][R2.64], R4 ;
""")
    ok, text = verdict(f, rule())
    assert ok and text.endswith("found 1 device-scope fence in _Z18single_pass_kernelPKiiPxPjS1_")


# Without -rdc a __noinline__ device function lies after the kernel's body and is reached by
# CALL.REL: linearly the ATOMG (ticket, at 0x100) comes before the STG and the MEMBAR
# (publish, at 0x180), but publish is called first. k_call: publish(p, 5); ticket(c).
CALL_REL_SASS = """
		Function : _Z6k_callPxPjS_
        /*0020*/                   CALL.REL.NOINC 0x120 ;
        /*0050*/                   CALL.REL.NOINC 0xc0 ;
        /*00a0*/                   STG.E.64 desc[UR6][R4.64], R2 ;
        /*00b0*/                   EXIT ;
        /*00c0*/                   HFMA2.MMA R7, -RZ, RZ, 0, 5.9604644775390625e-08 ;
        /*0100*/                   ATOMG.E.ADD.STRONG.GPU PT, R2, desc[UR4][R2.64], R7 ;
        /*0110*/                   RET.REL.NODEC R4 0x0 ;
        /*0120*/                   S2R R5, SR_CTAID.X ;
        /*0180*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0190*/                   MEMBAR.SC.GPU ;
        /*01f0*/                   RET.REL.NODEC R2 0x0 ;
"""

# With -rdc the callees are functions of their own, called by CALL.ABS at the address the
# relocation names (cuobjdump -elf), and every __threadfence() is padded with four @!PT LDS.
CALL_ABS_SASS = """
		Function : _Z7publishPxx$6
        /*0030*/                   STG.E.64 desc[UR4][R4.64], R6 ;
        /*0040*/              @!PT LDS RZ, [RZ] ;
        /*0050*/              @!PT LDS RZ, [RZ] ;
        /*0060*/              @!PT LDS RZ, [RZ] ;
        /*0070*/              @!PT LDS RZ, [RZ] ;
        /*0080*/                   MEMBAR.ALL.CTA ;
        /*0090*/                   MEMBAR.SC.GPU ;
        /*00d0*/                   RET.ABS.NODEC R20 0x0 ;
		Function : _Z6ticketPj$5
        /*0030*/                   ATOMG.E.ADD.STRONG.GPU PT, R4, desc[UR4][R4.64], R3 ;
        /*0040*/                   RET.ABS.NODEC R20 0x0 ;
		Function : _Z6k_callPxPjS_
        /*0080*/                   CALL.ABS.NOINC 0x0 ;
        /*00f0*/                   CALL.ABS.NOINC 0x0 ;
        /*0160*/                   STG.E.64 desc[UR4][R2.64], R4 ;
"""
CALL_ABS_ELF = """
.section .rela.text._Z6k_callPxPjS_	RELA
0xf0    _Z6ticketPj$5    R_CUDA_ABS55_16_34    0x0
0xd0    _Z6k_callPxPjS_    R_CUDA_ABS32_HI_32    0x100
0xb0    _Z6k_callPxPjS_    R_CUDA_ABS32_LO_32    0x100
0x80    _Z7publishPxx$6    R_CUDA_ABS55_16_34    0x0
0x70    _Z6k_callPxPjS_    R_CUDA_ABS32_HI_32    0x90
0x50    _Z6k_callPxPjS_    R_CUDA_ABS32_LO_32    0x90
"""


def test_a_fence_in_a_called_device_function_counts_in_program_order():
    f = sass_inspection(CALL_REL_SASS)
    assert binary.program_order(f.functions["_Z6k_callPxPjS_"], f) == \
        [["store", "fence", "atomic", "store"]]
    ok, text = verdict(f, rule())
    assert ok and text.endswith("found 1 device-scope fence in _Z6k_callPxPjS_")


def test_a_fence_in_a_separately_compiled_callee_counts_through_its_relocation():
    f = binary.Inspection()
    binary.parse_sass(CALL_ABS_SASS, f)
    f.functions["_Z6k_callPxPjS_"].kernel = True
    # Unresolved calls splice nothing: the kernel alone shows only its last store.
    assert not verdict(f, rule())[0]
    binary.parse_relocations(CALL_ABS_ELF, f)
    assert binary.program_order(f.functions["_Z6k_callPxPjS_"], f) == \
        [["store", "fence", "atomic", "store"]]
    ok, text = verdict(f, rule())
    assert ok and text.endswith("found 1 device-scope fence in _Z6k_callPxPjS_")
    # The padding that never runs is no shared memory.
    assert "LDS" not in f.functions["_Z7publishPxx$6"].ops


def test_calls_that_recurse_end():
    f = sass_inspection("""
		Function : _Z4loopPx
        /*0000*/                   STG.E.64 desc[UR4][R2.64], R4 ;
        /*0010*/                   CALL.REL.NOINC 0x40 ;
        /*0020*/                   EXIT ;
        /*0040*/                   MEMBAR.SC.GPU ;
        /*0050*/                   CALL.REL.NOINC 0x40 ;
        /*0060*/                   ATOMG.E.ADD.STRONG.GPU PT, R2, desc[UR4][R2.64], R7 ;
        /*0070*/                   RET.REL.NODEC R4 0x0 ;
""")
    assert binary.program_order(f.functions["_Z4loopPx"], f) == [["store", "fence", "atomic"]]


def test_library_kernels_do_not_meet_the_rule():
    f = binary.Inspection()
    binary.parse_sass("\t\tFunction : _ZN3cub6detail6kernelEv\n"
                         "        /*0090*/   MEMBAR.SC.GPU ;\n"
                         "\t\tFunction : _Z6kernelPx\n"
                         "        /*0010*/   STG.E [R2.64], R4 ;\n", f)
    for function in f.functions.values():
        function.kernel = True
    assert not verdict(f, rule())[0]


def test_no_kernel_fails():
    ok, text = verdict(binary.Inspection(), rule())
    assert not ok and text.endswith("found no __global__ function in your code")


# ------------------------------------------------------------------------------ manifest

FENCE_TECHNIQUE = """
[[technique]]
name = "memory_fence"
rule = "uses_memory_fence"
points = 10
voids = "all"
message = "m"
"""


def test_manifest_accepts_the_rule(tmp_path):
    ex = load_manifest(write(tmp_path, "ch03_x", "fenced", VALID + FENCE_TECHNIQUE))
    assert ex.technique == (Technique("memory_fence", "uses_memory_fence", 10.0, voids="all",
                                      message="m"),)


def test_manifest_rule_takes_no_value(tmp_path):
    text = VALID + FENCE_TECHNIQUE.replace("points = 10", "points = 10\nvalue = 2")
    with pytest.raises(ManifestError) as error:
        load_manifest(write(tmp_path, "ch03_x", "fenced", text))
    assert error.value.field == "technique[0].value" and "takes no value" in str(error.value)


# -------------------------------------------------------------------- single_pass_reduce

def single_pass_reduce() -> manifest.Exercise:
    return next(ex for ex in manifest.discover(ROOT) if ex.name == "single_pass_reduce")


def test_single_pass_reduce_requires_a_fence_on_every_point():
    # A missing fence is a correctness bug the tests rarely show, so the rule, not the
    # tests, must take the correctness points away.
    rules = {r.name: r for r in single_pass_reduce().technique}
    assert rules["memory_fence"].rule == "uses_memory_fence"
    assert rules["memory_fence"].voids == "all"


def test_a_correct_kernel_without_a_fence_earns_nothing():
    from test_scoring import built, ran_tests, sanitized
    ex = single_pass_reduce()
    # The fence-less reference: a relaxed ticket and no MEMBAR; its launcher calls no memset.
    f = binary.Inspection()
    binary.parse_sass("\t\tFunction : _Z18single_pass_kernelPKiiPxPjS1_\n"
                         "        /*0870*/   STG.E.64 desc[UR8][R6.64], R10 ;\n"
                         "        /*08c0*/   ATOMG.E.ADD.STRONG.GPU PT, R8, desc[UR8][R8.64], "
                         "R13 ;\n", f)
    f.functions["_Z18single_pass_kernelPKiiPxPjS1_"].kernel = True
    stage = StageResult("technique", StageStatus.PASSED)
    technique.classify(stage, ex.technique, f)
    assert [c.status for c in stage.cases] == ["failed", "passed"]
    tests = ran_tests()
    r = scoring.grade(ex, [built(), stage, tests, sanitized()])
    assert r.status is ExerciseStatus.FAILED and r.score == 0
    assert tests.points == 0 and tests.max_points > 0
    assert r.message.startswith("technique rule memory_fence failed, which voids every point")


# --------------------------------------------------------------------------- the toolkit

KERNELS = r"""
#include <cuda/atomic>
__global__ void k_threadfence(long long* p, unsigned* c) {
  p[blockIdx.x] = 1; __threadfence(); p[gridDim.x] = atomicAdd(c, 1u); }
__global__ void k_block(long long* p, unsigned* c) {
  p[blockIdx.x] = 1; __threadfence_block(); p[gridDim.x] = atomicAdd(c, 1u); }
__global__ void k_release(long long* p, unsigned* c) {
  p[blockIdx.x] = 1;
  cuda::atomic_ref<unsigned, cuda::thread_scope_device> ticket(*c);
  p[gridDim.x] = ticket.fetch_add(1u, cuda::memory_order_release); }
__global__ void k_none(long long* p, unsigned* c) {
  p[blockIdx.x] = 1; p[gridDim.x] = atomicAdd(c, 1u); }
__global__ void k_after(long long* p, unsigned* c) {
  p[blockIdx.x] = 1; unsigned t = atomicAdd(c, 1u); __threadfence(); p[gridDim.x] = t; }
__device__ __noinline__ void publish(long long* p) { p[blockIdx.x] = 1; __threadfence(); }
__device__ __noinline__ unsigned take_ticket(unsigned* c) { return atomicAdd(c, 1u); }
__global__ void k_called(long long* p, unsigned* c) {
  publish(p); p[gridDim.x] = take_ticket(c); }
"""


@pytest.mark.parametrize("flags", [[], ["-rdc=true"]], ids=["whole", "rdc"])
def test_the_toolkit_compiles_fences_as_the_rule_expects(tmp_path, flags):
    # With -rdc the called functions are functions of their own (CALL.ABS and a relocation),
    # without they follow the kernel's body (CALL.REL); both reach the rule in program order.
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    cuobjdump = tools.find("cuobjdump")
    if nvcc is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump")
    (tmp_path / "k.cu").write_text(KERNELS)
    obj = tmp_path / "k.o"
    subprocess.run([nvcc, "-c", "-O3", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    *flags, "-o", str(obj), str(tmp_path / "k.cu")],
                   check=True, capture_output=True, timeout=300)

    def dump(option):
        return subprocess.run([cuobjdump, option, str(obj)], check=True, capture_output=True,
                              text=True).stdout

    f = binary.Inspection()
    binary.parse_symbols(dump("-symbols"), f)
    binary.parse_sass(dump("-sass"), f)
    binary.parse_relocations(dump("-elf"), f)
    met = {k: verdict(f, rule(kernel=f"^_Z\\d+{k}P"))[0]
           for k in ("k_threadfence", "k_block", "k_release", "k_none", "k_after", "k_called")}
    assert met == {"k_threadfence": True, "k_block": False, "k_release": True, "k_none": False,
                   "k_after": False, "k_called": True}
