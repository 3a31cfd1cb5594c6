"""grader.stages.integrity: what the student's compiled code calls, judged before it runs.

The rules on symbol lists here; on real objects compiled by nvcc in
tests/test_technique_fixtures.py (the rejected fixtures) and below (the solutions pass)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader import binary, scoring
from grader.model import ExerciseStatus, StageResult, StageStatus
from grader.stages import integrity
from helpers import vector_add

COURSE = {"_Z24course_reduce_v1_neighboredPKiiiPxS1_P11CUstream_st",
          "_ZN6course16throw_cuda_errorE9cudaErrorPKcS2_i", "_ZN6course8sm_countEv",
          "_ZTIN6course9CudaErrorE", "_Z15reduce_partialsPKxiPxP11CUstream_st",
          "_ZN6course13results_nonceB5cxx11Ev"}
NAMES = {"_Z24course_reduce_v1_neighboredPKiiiPxS1_P11CUstream_st":
         "course_reduce_v1_neighbored(int const*, int, int, long long*, long long*, CUstream_st*)",
         "_ZN6course16throw_cuda_errorE9cudaErrorPKcS2_i":
         "course::throw_cuda_error(cudaError, char const*, char const*, int)",
         "_ZN6course8sm_countEv": "course::sm_count()",
         "_ZTIN6course9CudaErrorE": "typeinfo for course::CudaError",
         "_Z15reduce_partialsPKxiPxP11CUstream_st":
         "reduce_partials(long long const*, int, long long*, CUstream_st*)",
         "_ZN6course13results_nonceB5cxx11Ev": "course::results_nonce[abi:cxx11]()",
         "_ZN7testing4Test13RecordPropertyERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES8_":
         "testing::Test::RecordProperty(std::string const&, std::string const&)",
         "_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode":
         "std::basic_ofstream<char, std::char_traits<char> >::basic_ofstream(char const*, "
         "std::_Ios_Openmode)",
         "_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE":
         "std::thread::_M_start_thread(...)"}


def found(undefined, course_calls=()):
    return {f.symbol: f.why for f in integrity.check(set(undefined), COURSE, NAMES, course_calls)}


def test_the_runtime_the_support_macros_and_the_cxx_runtime_are_allowed():
    assert found({"cudaMalloc", "__cudaLaunchKernel", "cudaStreamSynchronize", "memcpy",
                  "__cxa_guard_acquire", "atexit", "_Znwm", "printf", "puts", "exit",
                  "_ZN6course16throw_cuda_errorE9cudaErrorPKcS2_i", "_ZN6course8sm_countEv",
                  "_ZTIN6course9CudaErrorE", "__stack_chk_fail", "getenv"}) == {}


def test_course_code_is_forbidden_unless_the_manifest_hands_it_over():
    calls = {"_Z24course_reduce_v1_neighboredPKiiiPxS1_P11CUstream_st",
             "_Z15reduce_partialsPKxiPxP11CUstream_st", "_ZN6course13results_nonceB5cxx11Ev"}
    assert set(found(calls)) == {NAMES[s] for s in calls}
    allowed = found(calls, course_calls=("reduce_partials",))
    assert set(allowed) == {NAMES["_Z24course_reduce_v1_neighboredPKiiiPxS1_P11CUstream_st"],
                            NAMES["_ZN6course13results_nonceB5cxx11Ev"]}
    assert all("the course's own code" in why for why in allowed.values())
    # A prefix of an allowed name is not the allowed name.
    assert found(calls, course_calls=("reduce",)).keys() == found(calls).keys()


@pytest.mark.parametrize("symbol, what", [
    ("fopen", "files"), ("fopen64", "files"), ("__open_2", "files"), ("write", "files"),
    ("pwrite64", "files"), ("__read_chk", "files"), ("dup2", "files"), ("mmap64", "files"),
    ("fork", "processes"), ("execvp", "processes"), ("posix_spawn", "processes"),
    ("system", "processes"), ("pthread_create", "threads"), ("kill", "processes"),
    ("sigaction", "processes"), ("setenv", "environment"), ("dlopen", "run time"),
    ("dlsym", "run time"), ("syscall", "kernel directly"),
])
def test_c_functions_outside_a_kernel_exercise_are_forbidden(symbol, what):
    assert what in found({symbol})[symbol]


@pytest.mark.parametrize("symbol, what", [
    ("_ZN7testing4Test13RecordPropertyERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEES8_",
     "GoogleTest"),
    ("_ZNSt14basic_ofstreamIcSt11char_traitsIcEEC1EPKcSt13_Ios_Openmode", "opens files"),
    ("_ZNSt6thread15_M_start_threadESt10unique_ptrINS_6_StateESt14default_deleteIS1_EEPFvvE",
     "starts threads"),
])
def test_cxx_library_calls_by_what_they_do(symbol, what):
    assert what in found({symbol})[NAMES[symbol]]


def test_names_that_only_look_like_forbidden_ones_pass():
    assert found({"readdir_helper", "my_fork_kernel", "_exit", "__cxa_atexit", "strlen",
                  "cudaMemcpyAsync", "thread_fence"}) == {}


def test_direct_system_calls_are_found_in_the_disassembly():
    text = ("0000000000000000 <vector_add>:\n   0:\tpush   %rbp\n   4:\tsyscall\n"
            "0000000000000010 <helper>:\n  10:\tint    $0x80\n"
            "0000000000000020 <clean>:\n  20:\tret\n")
    assert [f.symbol for f in integrity.direct_system_calls(text)] == ["vector_add", "helper"]
    assert integrity.direct_system_calls("0000 <f>:\n 0:\tcall   syscall_wrapper\n") == []


NVTX_AND_OWN = """\
0000000000000000 <nvtxDomainCreateA_impl_init_v3>:
  10:\tcall   15 <nvtxDomainCreateA_impl_init_v3+0x15>
\t\t\t11: R_X86_64_PLT32\tdlopen-0x4
0000000000000040 <_ZN3cub6detail4loadEv>:
  50:\tcall   55 <_ZN3cub6detail4loadEv+0x15>
\t\t\t51: R_X86_64_PLT32\tdlsym-0x4
0000000000000080 <_Z10vector_addPKfS0_Pfi>:
  90:\tcall   95 <_Z10vector_addPKfS0_Pfi+0x15>
\t\t\t91: R_X86_64_PLT32\tdlsym-0x4
"""


def test_calls_from_nvtx_and_library_namespaces_are_the_libraries_business():
    assert binary.callers("dlopen", NVTX_AND_OWN) == {"nvtxDomainCreateA_impl_init_v3"}
    assert binary.only_from_libraries("dlopen", NVTX_AND_OWN)
    # dlsym is also called from the student's own function: not only the libraries'.
    assert binary.callers("dlsym", NVTX_AND_OWN) == {"_ZN3cub6detail4loadEv",
                                                       "_Z10vector_addPKfS0_Pfi"}
    assert not binary.only_from_libraries("dlsym", NVTX_AND_OWN)
    # A student function named like NVTX's, but not its pattern, is the student's.
    own = NVTX_AND_OWN.replace("nvtxDomainCreateA_impl_init_v3", "nvtxMine")
    assert not binary.only_from_libraries("dlopen", own)
    assert not binary.only_from_libraries("fopen", NVTX_AND_OWN)  # nobody calls it


def test_a_rejection_names_every_call_and_scores_nothing():
    stage = StageResult("integrity", StageStatus.PASSED)
    integrity.classify(stage, [integrity.Finding(f"f{k}", "opens files") for k in range(5)])
    assert stage.status == "failed"
    assert "f0 (opens files)" in stage.message and "and 2 more" in stage.message
    assert len(stage.details["forbidden"]) == len(stage.cases) == 5
    result = scoring.not_trusted(vector_add(), [StageResult("build", StageStatus.PASSED), stage])
    assert result.status == ExerciseStatus.REJECTED
    assert result.score == 0 and result.message.startswith("integrity: ")


def test_a_stage_that_could_not_look_leaves_the_code_unchecked(grader_for, monkeypatch):
    from grader import tools
    monkeypatch.setattr(tools, "find", lambda name, required_for="": None)
    stage = integrity.run(grader_for(vector_add()).options, vector_add())
    assert stage.status == "error" and "nm not found" in stage.message
    result = scoring.not_trusted(vector_add(), [StageResult("build", StageStatus.PASSED), stage])
    assert result.status == ExerciseStatus.UNCHECKED and result.score == 0


@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("nm") is None,
                    reason="needs nvcc and nm")
def test_a_compiled_object_with_a_forbidden_call(tmp_path, grader_for):
    """End to end on a real archive: nvcc, ar, nm and objdump, as the stage runs them."""
    source = tmp_path / "vector_add.cu"
    source.write_text('#include <cstdio>\n#include <cuda_runtime.h>\n'
                      '__global__ void k(float* c) { c[0] = 1; }\n'
                      'void vector_add(const float*, const float*, float* c, int, '
                      'cudaStream_t s) {\n  k<<<1, 1, 0, s>>>(c);\n'
                      '  if (std::FILE* f = std::fopen("/tmp/x", "w")) std::fclose(f);\n}\n')
    options = grader_for(vector_add()).options
    options.build_dir.mkdir(parents=True, exist_ok=True)
    obj = tmp_path / "vector_add.o"
    subprocess.run(["nvcc", "-c", str(source), "-o", str(obj)], check=True, timeout=300)
    subprocess.run(["ar", "rcs", str(options.build_dir / "libvector_add_submission.a"),
                    str(obj)], check=True)
    stage = integrity.run(options, vector_add())
    assert stage.status == "failed", stage.message
    assert [f["symbol"] for f in stage.details["forbidden"]] == ["fopen"]


def test_an_exercise_is_checked_against_the_course_libraries_its_programs_link(tmp_path):
    """Its own course library, its shared folder's and the support libraries (meson.build's
    names), not the other exercises': a call into those does not link."""
    from grader import manifest
    from helpers import ROOT
    course = {ex.name: ex for ex in manifest.discover(ROOT)}
    for name in ("libcourse_support.a", "libcourse_testing.a", "libcourse_bench_main.a",
                 "libcourse_ceilings_main.a", "libvector_add_course.a",
                 "libreduce_v1_neighbored_submission.a", "libgrid_sync_course.a",
                 "libch02_execution_model_reduce_ladder_shared.a",
                 "libch04_shared_memory_matmul_ladder_shared.a"):
        (tmp_path / name).write_bytes(b"!<arch>\n")
    support = {"libcourse_support.a", "libcourse_testing.a", "libcourse_bench_main.a",
               "libcourse_ceilings_main.a"}

    def read(name):
        return {path.name for path in integrity.course_libraries(tmp_path, course[name])}

    assert read("reduce_v1_neighbored") == support | {
        "libch02_execution_model_reduce_ladder_shared.a"}
    assert read("vector_add") == support | {"libvector_add_course.a"}
    assert read("matmul_v3_register_blocking") == support | {
        "libch04_shared_memory_matmul_ladder_shared.a"}
