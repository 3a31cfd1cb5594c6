"""Which kernels count for the technique rules: those the student's launchers launch, read from
the host code of the library (objdump), or, given the kernels a test run launched, those; and
the kernels they launch from the device. A kernel nothing launches never meets a rule, and the
verdict names it. The captured objdump output below is what binutils 2.40 printed for
LAUNCH_CU and TABLE_CU compiled as meson.build compiles a submission (nvcc 13.0, -O3,
-Xcompiler=-fPIC), cut to the lines that name a function (instructions whose relocations name
only data, guard variables or the runtime, and NVIDIA's .nv_fatbin symbols, dropped); the last
test compiles the same sources when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, tools
from grader.manifest import Technique
from grader.model import StageResult, StageStatus
from grader.stages import technique
from helpers import vector_add

LAUNCH_CU = r"""
__global__ void launched_kernel(int* p) { p[threadIdx.x] = 1; }
__global__ void dead_kernel(int* p) {
  p[threadIdx.x] = __shfl_down_sync(0xffffffffu, p[threadIdx.x], 1); }
__global__ void by_address_kernel(int* p) { p[threadIdx.x] = 3; }
template <int N> __global__ void template_kernel(int* p) { p[threadIdx.x] = N; }
static void launch_template(int* p, cudaStream_t s) { template_kernel<4><<<1, 32, 0, s>>>(p); }
static void never_called(int* p) { dead_kernel<<<1, 32>>>(p); }
void launcher(int* p, cudaStream_t s) {
  launched_kernel<<<1, 32, 0, s>>>(p);
  launch_template(p, s);
  void* args[] = {&p};
  cudaLaunchKernel(reinterpret_cast<const void*>(by_address_kernel), 1, 32, args, 0, s);
}
"""
TABLE_CU = r"""
__global__ void first_kernel(int* p) { p[0] = 1; }
__global__ void second_kernel(int* p) { p[0] = 2; }
static void (*const kernels[])(int*) = {first_kernel, second_kernel};
void launch_by_table(int* p, int i) { kernels[i]<<<1, 1>>>(p); }
"""

# objdump -d -r -t --no-show-raw-insn libk.a, cut as the docstring says. What it shows: the
# launcher calls launched_kernel's stub (a relocation), takes by_address_kernel's address for
# cudaLaunchKernel (a relocation) and inlines template_kernel<4>'s launch, whose address it
# takes without a relocation (same section: "# 10 <...>"); a call that is relocated prints a
# placeholder target (the next function's cold part), which is no reference; the registration
# (__sti____cudaRegisterAll) and dead_kernel's own stub refer to dead_kernel.
OBJDUMP = """launch.o:     file format elf64-x86-64
SYMBOL TABLE:
0000000000000000 l    d  .text	0000000000000000 .text
0000000000000000 l    d  .text.unlikely	0000000000000000 .text.unlikely
0000000000000010 l     F .text	00000000000000e3 _Z15template_kernelILi4EEvPi
0000000000000000 l     F .text.unlikely	0000000000000010 _Z15template_kernelILi4EEvPi.cold
0000000000000010 l     F .text.unlikely	0000000000000010 _Z11dead_kernelPi.cold
0000000000000030 l     F .text.unlikely	0000000000000010 _Z15launched_kernelPi.cold
0000000000000050 l     F .text.unlikely	0000000000000010 _Z8launcherPiP11CUstream_st.cold
0000000000000000 l    d  .text.startup	0000000000000000 .text.startup
0000000000000000 l     F .text.startup	00000000000000e8 _ZL24__sti____cudaRegisterAllv
0000000000000100 g     F .text	00000000000000e3 .hidden _Z11dead_kernelPi
00000000000001f0 g     F .text	00000000000000e3 .hidden _Z17by_address_kernelPi
00000000000002e0 g     F .text	00000000000000e3 .hidden _Z15launched_kernelPi
00000000000003d0 g     F .text	00000000000000e3 .hidden _Z35__device_stub__Z15launched_kernelPiPi
00000000000004c0 g     F .text	000000000000021a _Z8launcherPiP11CUstream_st
00000000000006e0 g     F .text	00000000000000e3 .hidden _Z31__device_stub__Z11dead_kernelPiPi
Disassembly of section .text:
0000000000000010 <_Z15template_kernelILi4EEvPi>:
  ee:	jmp    f3 <_Z15template_kernelILi4EEvPi+0xe3>
			ef: R_X86_64_PC32	.text.unlikely-0x4
0000000000000100 <_Z11dead_kernelPi>:
 1b0:	lea    0x0(%rip),%rsi        # 1b7 <_Z11dead_kernelPi+0xb7>
			1b3: R_X86_64_PC32	_Z11dead_kernelPi-0x4
 1de:	jmp    1e3 <_Z11dead_kernelPi+0xe3>
			1df: R_X86_64_PC32	.text.unlikely+0xc
00000000000001f0 <_Z17by_address_kernelPi>:
 2a0:	lea    0x0(%rip),%rsi        # 2a7 <_Z17by_address_kernelPi+0xb7>
			2a3: R_X86_64_PC32	_Z17by_address_kernelPi-0x4
 2ce:	jmp    2d3 <_Z17by_address_kernelPi+0xe3>
			2cf: R_X86_64_PC32	.text.unlikely+0x1c
00000000000002e0 <_Z15launched_kernelPi>:
 390:	lea    0x0(%rip),%rsi        # 397 <_Z15launched_kernelPi+0xb7>
			393: R_X86_64_PC32	_Z15launched_kernelPi-0x4
 3be:	jmp    3c3 <_Z15launched_kernelPi+0xe3>
			3bf: R_X86_64_PC32	.text.unlikely+0x2c
00000000000003d0 <_Z35__device_stub__Z15launched_kernelPiPi>:
 480:	lea    0x0(%rip),%rsi        # 487 <_Z35__device_stub__Z15launched_kernelPiPi+0xb7>
			483: R_X86_64_PC32	_Z15launched_kernelPi-0x4
 4ae:	jmp    4b3 <_Z35__device_stub__Z15launched_kernelPiPi+0xe3>
			4af: R_X86_64_PC32	.text.unlikely+0x3c
00000000000004c0 <_Z8launcherPiP11CUstream_st>:
 5a4:	lea    0x0(%rip),%rdi        # 5ab <_Z8launcherPiP11CUstream_st+0xeb>
			5a7: R_X86_64_PC32	_Z17by_address_kernelPi-0x4
 5e5:	call   5ea <_Z8launcherPiP11CUstream_st+0x12a>
			5e6: R_X86_64_PLT32	_Z35__device_stub__Z15launched_kernelPiPi-0x4
 61d:	lea    -0x614(%rip),%rsi        # 10 <_Z15template_kernelILi4EEvPi>
 6d5:	jmp    6da <_Z8launcherPiP11CUstream_st+0x21a>
			6d6: R_X86_64_PC32	.text.unlikely+0x4c
00000000000006e0 <_Z31__device_stub__Z11dead_kernelPiPi>:
 790:	lea    0x0(%rip),%rsi        # 797 <_Z31__device_stub__Z11dead_kernelPiPi+0xb7>
			793: R_X86_64_PC32	_Z11dead_kernelPi-0x4
 7be:	jmp    7c3 <_Z31__device_stub__Z11dead_kernelPiPi+0xe3>
			7bf: R_X86_64_PC32	.text.unlikely+0x5c
Disassembly of section .text.unlikely:
0000000000000000 <_Z15template_kernelILi4EEvPi.cold>:
   b:	call   10 <_Z11dead_kernelPi.cold>
			c: R_X86_64_PLT32	_Unwind_Resume-0x4
0000000000000010 <_Z11dead_kernelPi.cold>:
  1b:	call   20 <_Z17by_address_kernelPi.cold>
			1c: R_X86_64_PLT32	_Unwind_Resume-0x4
0000000000000050 <_Z8launcherPiP11CUstream_st.cold>:
  5b:	call   60 <_Z31__device_stub__Z11dead_kernelPiPi.cold>
			5c: R_X86_64_PLT32	_Unwind_Resume-0x4
Disassembly of section .text.startup:
0000000000000000 <_ZL24__sti____cudaRegisterAllv>:
  2c:	lea    0x0(%rip),%rsi        # 33 <_ZL24__sti____cudaRegisterAllv+0x33>
			2f: R_X86_64_PC32	.text+0xc
  5a:	lea    0x0(%rip),%rsi        # 61 <_ZL24__sti____cudaRegisterAllv+0x61>
			5d: R_X86_64_PC32	_Z17by_address_kernelPi-0x4
  88:	lea    0x0(%rip),%rsi        # 8f <_ZL24__sti____cudaRegisterAllv+0x8f>
			8b: R_X86_64_PC32	_Z11dead_kernelPi-0x4
  b6:	lea    0x0(%rip),%rsi        # bd <_ZL24__sti____cudaRegisterAllv+0xbd>
			b9: R_X86_64_PC32	_Z15launched_kernelPi-0x4
  db:	lea    0x0(%rip),%rdi        # e2 <_ZL24__sti____cudaRegisterAllv+0xe2>
			de: R_X86_64_PC32	.text-0x4
  e3:	jmp    e8 <_Z37__device_stub__Z17by_address_kernelPiPi.cold+0x78>
			e4: R_X86_64_PLT32	atexit-0x4
table.o:     file format elf64-x86-64
SYMBOL TABLE:
0000000000000000 l    d  .text	0000000000000000 .text
0000000000000000 l    d  .text.unlikely	0000000000000000 .text.unlikely
0000000000000000 l     O .data.rel.ro.local	0000000000000010 _ZL7kernels
0000000000000000 l    d  .text.startup	0000000000000000 .text.startup
0000000000000000 l     F .text.startup	000000000000008c _ZL24__sti____cudaRegisterAllv
0000000000000000 l    d  .data.rel.ro.local	0000000000000000 .data.rel.ro.local
0000000000000010 g     F .text	00000000000000e3 .hidden _Z12first_kernelPi
0000000000000100 g     F .text	00000000000000e3 .hidden _Z13second_kernelPi
00000000000001f0 g     F .text	0000000000000057 _Z15launch_by_tablePii
Disassembly of section .text:
0000000000000010 <_Z12first_kernelPi>:
  c0:	lea    0x0(%rip),%rsi        # c7 <_Z12first_kernelPi+0xb7>
			c3: R_X86_64_PC32	_Z12first_kernelPi-0x4
  ee:	jmp    f3 <_Z12first_kernelPi+0xe3>
			ef: R_X86_64_PC32	.text.unlikely-0x4
0000000000000100 <_Z13second_kernelPi>:
 1b0:	lea    0x0(%rip),%rsi        # 1b7 <_Z13second_kernelPi+0xb7>
			1b3: R_X86_64_PC32	_Z13second_kernelPi-0x4
 1de:	jmp    1e3 <_Z13second_kernelPi+0xe3>
			1df: R_X86_64_PC32	.text.unlikely+0xc
00000000000001f0 <_Z15launch_by_tablePii>:
 224:	lea    0x0(%rip),%rax        # 22b <_Z15launch_by_tablePii+0x3b>
			227: R_X86_64_PC32	.data.rel.ro.local-0x4
Disassembly of section .text.unlikely:
Disassembly of section .text.startup:
0000000000000000 <_ZL24__sti____cudaRegisterAllv>:
  2c:	lea    0x0(%rip),%rsi        # 33 <_ZL24__sti____cudaRegisterAllv+0x33>
			2f: R_X86_64_PC32	_Z13second_kernelPi-0x4
  5a:	lea    0x0(%rip),%rsi        # 61 <_ZL24__sti____cudaRegisterAllv+0x61>
			5d: R_X86_64_PC32	_Z12first_kernelPi-0x4
  7f:	lea    0x0(%rip),%rdi        # 86 <_ZL24__sti____cudaRegisterAllv+0x86>
			82: R_X86_64_PC32	.text-0x4
  87:	jmp    8c <_Z33__device_stub__Z13second_kernelPiPi.cold+0x5c>
			88: R_X86_64_PLT32	atexit-0x4
"""

# objdump -r libk.a, the data sections' records: the table of kernel pointers.
RECORDS = """launch.o:     file format elf64-x86-64
RELOCATION RECORDS FOR [.data.rel.local.DW.ref.__gxx_personality_v0]:
0000000000000000 R_X86_64_64       __gxx_personality_v0
table.o:     file format elf64-x86-64
RELOCATION RECORDS FOR [.data.rel.ro.local]:
0000000000000000 R_X86_64_64       _Z12first_kernelPi
0000000000000008 R_X86_64_64       _Z13second_kernelPi
RELOCATION RECORDS FOR [.data.rel.local.DW.ref.__gxx_personality_v0]:
0000000000000000 R_X86_64_64       __gxx_personality_v0
"""

KERNELS = {"launched": "_Z15launched_kernelPi", "dead": "_Z11dead_kernelPi",
           "by_address": "_Z17by_address_kernelPi", "template": "_Z15template_kernelILi4EEvPi",
           "first": "_Z12first_kernelPi", "second": "_Z13second_kernelPi"}

# Device code for the rules: the dead kernel shuffles and spills, the launched one exchanges
# values through shared memory.
SASS = """
		Function : _Z11dead_kernelPi
        /*0080*/                   SHFL.DOWN PT, R5, R4, 0x1, 0x1f ;
        /*0090*/                   STL [R1], R5 ;
		Function : _Z15launched_kernelPi
        /*0080*/                   STS [R0], R5 ;
        /*0090*/                   LDS R7, [R0+0x4] ;
		Function : _Z17by_address_kernelPi
        /*0080*/                   STG.E desc[UR4][R2.64], R5 ;
"""


def found_with_host_code(sass: str = SASS) -> binary.Inspection:
    f = binary.Inspection()
    binary.parse_sass(sass, f)
    for name in KERNELS.values():
        f.function(name).kernel = True
    f.functions[KERNELS["dead"]].registers = 200
    f.functions[KERNELS["launched"]].registers = 16
    binary.parse_host_code(OBJDUMP, RECORDS, f)
    return f


def rule(kind: str, kernel: str = "", **fields) -> Technique:
    return Technique(name="r", rule=kind, points=10.0, kernel=kernel, **fields)


def verdict(found, r, reach=None) -> tuple[bool, str]:
    passed, expected, seen = technique.check(r, found, reach)
    return passed, f"expected {expected}; found {seen}"


# --------------------------------------------------------------------------- host code

def test_the_launchers_reach_what_they_launch_however_they_launch_it():
    reach = technique.reachability(found_with_host_code())
    assert reach.kernels == {KERNELS[k] for k in ("launched", "by_address", "template",
                                                  "first", "second")}
    assert not reach.by_run and not reach.counts(KERNELS["dead"])


def test_the_registration_and_the_kernels_own_stubs_are_no_roots():
    code = found_with_host_code().host_code
    # Both refer to dead_kernel and are externally visible (hidden, but global)...
    assert ("_Z31__device_stub__Z11dead_kernelPiPi", "") in code.exported
    assert (KERNELS["dead"], "") in code.refs[("_Z31__device_stub__Z11dead_kernelPiPi", "")]
    assert (KERNELS["dead"], "") in code.refs[("_ZL24__sti____cudaRegisterAllv", "launch.o")]
    # ...and the launcher is a root, static functions are not.
    assert ("_Z8launcherPiP11CUstream_st", "") in code.exported
    assert ("_ZL24__sti____cudaRegisterAllv", "") not in code.exported


def test_a_relocated_call_is_no_reference_to_the_target_objdump_prints_for_it():
    # template_kernel<4>.cold calls _Unwind_Resume; objdump prints the next function's
    # address (dead_kernel's cold part) as the target until the relocation fills it in.
    code = found_with_host_code().host_code
    template = (KERNELS["template"], "launch.o")
    assert template in code.refs[("_Z8launcherPiP11CUstream_st", "")]
    assert (KERNELS["dead"], "") not in code.refs.get(template, set())


def test_a_section_offset_names_the_function_or_object_there():
    code = found_with_host_code().host_code
    # .data.rel.ro.local-0x4 (PC-relative) is offset 0: the table, which names both kernels.
    assert code.refs[("_Z15launch_by_tablePii", "")] == {("_ZL7kernels", "table.o")}
    assert code.refs[("_ZL7kernels", "table.o")] == {(KERNELS["first"], ""),
                                                      (KERNELS["second"], "")}


# ---------------------------------------------------------------------------- verdicts

def test_a_shuffle_only_in_a_kernel_nothing_launches_fails_and_names_it():
    ok, text = verdict(found_with_host_code(), rule("uses_shuffle"))
    assert not ok
    assert text.startswith("expected warp shuffles (SHFL) in a kernel your launchers launch (")
    assert text.endswith("; found SHFL only in _Z11dead_kernelPi, which nothing launches")
    assert "_Z15launched_kernelPi" in text.split("; found")[0]


def test_a_launched_kernel_that_uses_it_passes_and_names_the_kernels_checked():
    found = found_with_host_code()
    ok, text = verdict(found, rule("uses_shared_memory"))
    assert ok and text.endswith("found 2 shared-memory uses in _Z15launched_kernelPi")
    stage = StageResult("technique", StageStatus.PASSED)
    technique.classify(stage, (rule("uses_shared_memory", kernel="launched|dead"),), found)
    assert stage.details["checked_kernels"] == {"r": ["_Z15launched_kernelPi"]}
    assert stage.details["launched_by"] == "launchers"
    assert "(_Z15launched_kernelPi)" in stage.cases[0].message


def test_when_every_selected_kernel_is_dead_the_verdict_says_so():
    ok, text = verdict(found_with_host_code(), rule("uses_shuffle", kernel="dead"))
    assert not ok and text == ("expected warp shuffles (SHFL) in a kernel your launchers "
                               "launch; found SHFL only in _Z11dead_kernelPi, which nothing "
                               "launches")
    ok, text = verdict(found_with_host_code(), rule("uses_texture", kernel="dead"))
    assert not ok and text.endswith("found none: _Z11dead_kernelPi, which nothing launches")


def test_limits_hold_on_the_kernels_that_run():
    found = found_with_host_code()
    ok, text = verdict(found, rule("max_registers", value=64))
    assert ok and "200" not in text.split("; found")[1]
    assert verdict(found, rule("no_local_memory"))[0]
    # A limit no launched kernel is checked on proves nothing.
    ok, text = verdict(found, rule("no_local_memory", kernel="dead"))
    assert not ok and text.endswith("found none: _Z11dead_kernelPi, which nothing launches")


# ------------------------------------------------------------------------- the run's set

def test_the_kernels_a_run_launched_decide_when_given():
    found = found_with_host_code()
    stage = StageResult("technique", StageStatus.PASSED)
    technique.classify(stage, (rule("uses_shuffle"),), found, launched={KERNELS["dead"]})
    assert stage.status is StageStatus.PASSED
    assert stage.details["checked_kernels"] == {"r": [KERNELS["dead"]]}
    assert stage.details["launched_by"] == "run"
    stage = StageResult("technique", StageStatus.PASSED)
    technique.classify(stage, (rule("uses_shuffle"),), found,
                       launched={KERNELS["launched"], "_Z13course_kernelPf"})
    assert stage.status is StageStatus.FAILED
    assert stage.details["checked_kernels"] == {"r": [KERNELS["launched"]]}
    assert ("expected warp shuffles (SHFL) in a kernel the tests launched "
            "(_Z15launched_kernelPi); found SHFL only in _Z11dead_kernelPi, which the tests "
            "never launched") in stage.cases[0].message


def test_classify_can_be_called_again_with_the_runs_set():
    found = found_with_host_code()
    first, again = (StageResult("technique", StageStatus.PASSED) for _ in range(2))
    technique.classify(first, (rule("uses_shuffle"),), found)
    technique.classify(again, (rule("uses_shuffle"),), found, launched={KERNELS["dead"]})
    assert (first.status, again.status) == (StageStatus.FAILED, StageStatus.PASSED)
    assert found.functions[KERNELS["dead"]].kernel  # the inspection is left as it was


# Dynamic parallelism: parent launches child from the device (cuobjdump -elf names child in
# parent's relocations, through a device function with -rdc); orphan is launched by nobody.
DEVICE_SASS = """
		Function : _Z6parentPi
        /*0080*/                   CALL.ABS.NOINC 0x0 ;
		Function : _Z12launch_childPi
        /*0080*/                   MOV R4, R2 ;
		Function : _Z5childPi
        /*0080*/                   SHFL.BFLY PT, R5, R4, 0x1, 0x1f ;
		Function : _Z6orphanPi
        /*0080*/                   SHFL.BFLY PT, R5, R4, 0x1, 0x1f ;
"""
DEVICE_ELF = """
.section .rela.text._Z6parentPi	RELA
0x80    _Z12launch_childPi    R_CUDA_ABS55_16_34    0x0

.section .rela.text._Z12launch_childPi	RELA
0x260    __cudaCDP2LaunchDeviceV2    R_CUDA_ABS55_16_34    0x0
0x170    __cudaCDP2GetParameterBufferV2    R_CUDA_ABS55_16_34    0x0
0xb0    _Z5childPi    R_CUDA_FUNC_DESC32_HI_32    0x0
0xa0    _Z5childPi    R_CUDA_FUNC_DESC32_LO_32    0x0
"""


def test_kernels_launched_from_the_device_count_with_their_parent():
    f = binary.Inspection()
    binary.parse_sass(DEVICE_SASS, f)
    binary.parse_relocations(DEVICE_ELF, f)
    for name in ("_Z6parentPi", "_Z5childPi", "_Z6orphanPi"):
        f.functions[name].kernel = True
    reach = technique.reachability(f, launched={"_Z6parentPi"})
    assert reach.kernels == {"_Z6parentPi", "_Z5childPi"}
    ok, text = verdict(f, rule("uses_shuffle"), reach)
    assert ok and text.endswith("found 1 SHFL in _Z5childPi")
    ok, text = verdict(f, rule("uses_shuffle", kernel="orphan"), reach)
    assert not ok and text.endswith("SHFL only in _Z6orphanPi, which the tests never launched")


def test_without_host_code_every_kernel_counts():
    # Captured device code alone (the other technique tests): nothing says what runs.
    f = binary.Inspection()
    binary.parse_sass(SASS, f)
    for name in f.functions:
        f.functions[name].kernel = True
    assert technique.reachability(f) == technique.Reach()
    stage = StageResult("technique", StageStatus.PASSED)
    technique.classify(stage, (rule("uses_shuffle"),), f)
    assert stage.status is StageStatus.PASSED and stage.details["launched_by"] == "unknown"
    assert len(stage.details["checked_kernels"]["r"]) == 3


# ------------------------------------------------------------------------------- the stage

def test_missing_objdump_is_an_error_for_kernel_rules(monkeypatch, grader_for):
    # Without the host code a kernel nothing launches would count.
    monkeypatch.setattr(tools, "find",
                        lambda name, required_for="": None if name == "objdump" else "/bin/true")
    ex = vector_add(technique=(rule("uses_shuffle"),))
    grader = grader_for(ex)
    (grader.options.build_dir / "libvector_add_submission.a").write_bytes(b"!<arch>\n")
    stage = technique.run(grader.options, ex)
    assert stage.status is StageStatus.ERROR
    assert stage.message.startswith("objdump not found (binutils)")


def test_the_runs_set_needs_no_host_code(monkeypatch, grader_for):
    seen = {}

    def inspect(library, cuobjdump, nm, cxxfilt, objdump=None):
        seen["objdump"] = objdump
        return found_with_host_code()

    monkeypatch.setattr(tools, "find", lambda name, required_for="": f"/usr/bin/{name}")
    monkeypatch.setattr(technique, "inspect", inspect)
    ex = vector_add(technique=(rule("uses_shuffle"),))
    grader = grader_for(ex)
    (grader.options.build_dir / "libvector_add_submission.a").write_bytes(b"!<arch>\n")
    stage = technique.run(grader.options, ex, launched={KERNELS["dead"]})
    assert seen["objdump"] is None and stage.status is StageStatus.PASSED
    stage = technique.run(grader.options, ex)
    assert seen["objdump"] == "/usr/bin/objdump" and stage.status is StageStatus.FAILED


# --------------------------------------------------------------------------- the toolkit

DEVICE_LAUNCH_CU = r"""
__global__ void child(int* p) {
  p[threadIdx.x] = __shfl_xor_sync(0xffffffffu, p[threadIdx.x], 1); }
__device__ void launch_child(int* p) { child<<<1, 32>>>(p); }
__global__ void parent(int* p) { launch_child(p); }
__global__ void orphan(int* p) { child<<<1, 32>>>(p); }
void launch_parent(int* p) { parent<<<1, 1>>>(p); }
"""


@pytest.mark.same_in_template  # the toolkit on the test's own sources
def test_the_toolkit_and_binutils_show_what_the_launchers_launch(tmp_path):
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    needed = [tools.find(name) for name in ("cuobjdump", "objdump", "nm", "ar")]
    if nvcc is None or None in needed:
        pytest.skip("needs nvcc, cuobjdump and binutils")
    flags = ["-c", "-O3", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
             "-Xcompiler=-fPIC"]
    objects = []
    for name, source, extra in (("launch", LAUNCH_CU, []), ("table", TABLE_CU, []),
                                ("device", DEVICE_LAUNCH_CU, ["-rdc=true"])):
        (tmp_path / f"{name}.cu").write_text(source)
        objects.append(str(tmp_path / f"{name}.o"))
        subprocess.run([nvcc, *flags, *extra, "-o", objects[-1], str(tmp_path / f"{name}.cu")],
                       check=True, capture_output=True, timeout=300)
    library = tmp_path / "libk_submission.a"
    subprocess.run([tools.find("ar"), "rcs", str(library), *objects], check=True, timeout=60)
    found = binary.inspect(library, tools.find("cuobjdump"), tools.find("nm"),
                              tools.find("c++filt"), tools.find("objdump"))
    reach = technique.reachability(found)
    launched = {found.pretty(k) for k in reach.kernels}
    dead = {found.pretty(n) for n, f in found.functions.items() if f.kernel} - launched
    assert {technique._short(n) for n in launched} == {
        "launched_kernel", "by_address_kernel", "template_kernel<4>", "first_kernel",
        "second_kernel", "parent", "child"}
    assert {technique._short(n) for n in dead} == {"dead_kernel", "orphan"}
    ok, text = verdict(found, rule("uses_shuffle", kernel="dead_kernel|launched_kernel"))
    assert not ok and text.endswith("found SHFL only in dead_kernel, which nothing launches")
