"""The waits_on_grid_dependency technique rule: the wait of a programmatic dependent launch
(cudaGridDependencySynchronize(), griddepcontrol.wait) is ACQBULK on sm_90, its trigger
(cudaTriggerProgrammaticLaunchCompletion(), griddepcontrol.launch_dependents) PREEXIT, and a
kernel that only triggers fails, saying so. The SASS is what nvcc 13.0 (-O3, sm_90) and the
cuobjdump 13 wheel printed (encodings and unrelated instructions cut); the last test compiles
the same kernels, with and without -rdc, when the toolkit is there."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, tools
from grader.manifest import Technique
from grader.stages import technique
from helpers import sass_inspection
from test_technique import verdict

SASS = """
		Function : _Z11step_kernelPfmi
        /*0980*/                   STS [R0], R5 ;
        /*0990*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*09a0*/                   ACQBULK ;
        /*09f0*/                   PREEXIT ;
        /*0a30*/               @P0 EXIT ;
        /*0ae0*/                   LDG.E R9, desc[UR8][R16.64] ;
        /*0ff0*/                   STG.E desc[UR8][R16.64], R9 ;
        /*1010*/                   EXIT ;
		Function : _Z13triggers_onlyPf
        /*0030*/                   PREEXIT ;
        /*0080*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*00a0*/                   STG.E desc[UR4][R2.64], R5 ;
		Function : _Z5plainPf
        /*0080*/                   LDG.E R0, desc[UR4][R2.64] ;
        /*00a0*/                   STG.E desc[UR4][R2.64], R5 ;
		Function : _Z10never_runsPf
        /*0030*/              @!PT ACQBULK ;
        /*0080*/                   LDG.E R0, desc[UR4][R2.64] ;
"""


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(SASS)


def check(found, kernel):
    return verdict(found, Technique(name="grid_dependency_wait",
                                    rule="waits_on_grid_dependency", points=5.0, kernel=kernel))


def test_the_rule_is_declared_about_kernels():
    assert "waits_on_grid_dependency" in technique.RULES
    assert "waits_on_grid_dependency" in technique.KERNEL_RULES


def test_a_kernel_that_waits_meets_the_rule(found):
    ok, text = check(found, "step_kernel")
    assert ok
    assert text == ("expected a wait on the grid dependency (ACQBULK: "
                    "cudaGridDependencySynchronize() or griddepcontrol.wait) in kernel "
                    "_Z11step_kernelPfmi; found 1 grid-dependency wait in _Z11step_kernelPfmi")


def test_a_trigger_without_a_wait_fails_and_says_so(found):
    ok, text = check(found, "triggers_only")
    assert not ok
    assert text.endswith("found none: the kernel lets the next one start (PREEXIT: "
                         "cudaTriggerProgrammaticLaunchCompletion()) but never waits for the "
                         "one before, so when it is launched programmatically it may read data "
                         "the previous kernel has not finished writing")


def test_a_plain_kernel_fails_with_nothing_to_explain(found):
    ok, text = check(found, "plain")
    assert not ok and text.endswith("; found none")


def test_a_wait_that_never_runs_does_not_count(found):
    assert found.functions["_Z10never_runsPf"].ops.get("ACQBULK", 0) == 0
    assert not check(found, "never_runs")[0]


# --------------------------------------------------------------------------- the toolkit

KERNELS = r"""
__global__ void waits(float* d) { cudaGridDependencySynchronize(); d[threadIdx.x] += 1.f; }
__global__ void waits_ptx(float* d) {
  asm volatile("griddepcontrol.wait;" ::: "memory"); d[threadIdx.x] += 1.f; }
__device__ __noinline__ void wait_for_previous() { cudaGridDependencySynchronize(); }
__global__ void waits_in_callee(float* d) { wait_for_previous(); d[threadIdx.x] += 1.f; }
__global__ void triggers_only(float* d) {
  cudaTriggerProgrammaticLaunchCompletion(); d[threadIdx.x] += 1.f; }
__global__ void plain(float* d) { d[threadIdx.x] += 1.f; }
"""


@pytest.mark.same_in_template
@pytest.mark.parametrize("flags", [[], ["-rdc=true"]], ids=["whole", "rdc"])
def test_the_toolkit_emits_acqbulk_for_the_wait_only(tmp_path, flags):
    nvcc = shutil.which("nvcc") or shutil.which("/usr/local/cuda/bin/nvcc")
    cuobjdump = tools.find("cuobjdump")
    if nvcc is None or cuobjdump is None:
        pytest.skip("needs nvcc and cuobjdump")
    (tmp_path / "k.cu").write_text(KERNELS)
    obj = tmp_path / "k.o"
    subprocess.run([nvcc, "-c", "-O3", "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    *flags, "-o", str(obj), str(tmp_path / "k.cu")],
                   check=True, capture_output=True, timeout=300)
    found = binary.inspect(obj, cuobjdump, None, None)
    met = {name.split("P")[0].lstrip("_Z0123456789"): verdict(found, Technique(
               name="w", rule="waits_on_grid_dependency", points=1.0, kernel=f"^{name}$"))[0]
           for name, f in found.functions.items() if f.kernel}
    # The callee of waits_in_callee is a function of its own with -rdc: the rule follows it.
    assert met == {"waits": True, "waits_ptx": True, "waits_in_callee": True,
                   "triggers_only": False, "plain": False}
    assert found.functions["_Z13triggers_onlyPf"].ops.get("PREEXIT") == 1
