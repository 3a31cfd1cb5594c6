"""The technique stage without the toolkit: its parsers and rules on captured cuobjdump and nm
output (tests/data/technique/, README there says how it was made), the [[technique]] manifest
entries, the scoring of the stage, and its rendering and report round trip."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import xml.etree.ElementTree as ET

import pytest

from grader import binary, model, render, scoring, tools
from grader.errors import ManifestError
from grader.manifest import Technique, load_manifest
from grader.model import CaseStatus, ExerciseStatus, StageResult, StageStatus
from grader.stages import technique
from helpers import PYTHON, ROOT, TESTS, vector_add
from test_manifest import VALID, write

DATA = TESTS / "data" / "technique"


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    f = binary.Inspection()
    binary.parse_symbols((DATA / "symbols.txt").read_text(), f)
    binary.parse_sass((DATA / "sass.txt").read_text(), f)
    binary.parse_res_usage((DATA / "res_usage.txt").read_text(), f)
    binary.parse_relocations((DATA / "elf.txt").read_text(), f)
    binary.parse_nm((DATA / "nm.txt").read_text(), f)
    names = sorted(set(f.functions) | {n for n, _ in f.host})
    demangled = subprocess.run(["c++filt"], input="\n".join(names) + "\n", text=True,
                               capture_output=True).stdout.splitlines() \
        if tools.find("c++filt") else []
    if len(demangled) == len(names):
        f.demangled = dict(zip(names, demangled))
    return f


def rule(kind, name="r", points=10.0, **fields) -> Technique:
    return Technique(name=name, rule=kind, points=points, **fields)


# ------------------------------------------------------------------------------- parsers

def test_parsers_read_kernels_instructions_and_resources(found):
    kernels = {n for n, f in found.functions.items() if f.kernel}
    assert {"_Z11shfl_kernelPKfPf", "_Z11smem_kernelPKfPf", "_Z6parentPf", "_Z5childPf",
            "_Z12local_kernelPKfPfi"} <= kernels
    assert sum(binary.in_namespace(k, "cub") for k in kernels) == 4
    shfl = found.functions["_Z11shfl_kernelPKfPf"]
    assert shfl.ops["SHFL"] == 5 and shfl.bank3 == 1 and shfl.registers == 11
    assert "coeff" in shfl.calls  # the __constant__ variable's relocation
    smem = found.functions["_Z11smem_kernelPKfPf"]
    assert smem.shared == 1024 and smem.ops["LDS"] >= 1 and smem.ops["STS"] >= 1
    assert smem.bank3 == 0  # c[0x0] (parameters) is not __constant__ data
    local = found.functions["_Z12local_kernelPKfPfi"]
    assert local.stack == 256 and local.ops.get("STL", 0) + local.ops.get("LDL", 0) > 0
    assert {"__cudaCDP2LaunchDeviceV2", "__cudaCDP2GetParameterBufferV2", "_Z5childPf"} <= \
        found.functions["_Z6parentPf"].calls
    assert ("_Z11shfl_kernelPKfPf", "T") in found.host
    assert any(binary.in_namespace(n, "cub") and kind != "U" for n, kind in found.host)


@pytest.mark.parametrize("name, namespace, inside", [
    ("_ZN3cub17CUB_300001_SM_9006detail11EmptyKernelIvEEvv", "cub", True),
    ("__device_stub__ZN3cub17CUB_300001_SM_9006detail11EmptyKernelIvEEvv", "cub", True),
    ("_ZZN6thrust6detail1fEvE1x", "thrust", True),
    ("_ZNK3cub3Foo3barEv", "cub", True),
    ("_Z6reducePN3cub3FooE", "cub", False),   # a parameter of a cub type is not a cub call
    ("_ZN4cubx1fEv", "cub", False),
    ("_ZN3cubx1fEv", "cub", False),
    ("cublasSgemm_v2", "cub", False)])
def test_in_namespace(name, namespace, inside):
    assert binary.in_namespace(name, namespace) is inside


# --------------------------------------------------------------------------------- rules

def verdict(found, r):
    passed, expected, seen = technique.check(r, found)
    return passed, f"expected {expected}; found {seen}"


def test_uses_shuffle(found):
    ok, text = verdict(found, rule("uses_shuffle", kernel="shfl_kernel"))
    assert ok and "5 SHFLs in shfl_kernel" in text
    ok, text = verdict(found, rule("uses_shuffle", kernel="smem_kernel"))
    assert not ok
    assert text == ("expected warp shuffles (SHFL) in kernel smem_kernel; found none: the kernel "
                    "exchanges values through shared memory (LDS/STS)")


def test_uses_rules_do_not_count_library_kernels(found):
    # CUB's kernels shuffle; with no kernel regex only the student's own kernels count.
    kernels = technique.selected_kernels(rule("uses_shuffle"), found)
    assert kernels and not any(binary.in_namespace(k.name, "cub") for k in kernels)
    assert technique.selected_kernels(rule("uses_shuffle", kernel="DeviceReduceKernel"), found)


def test_uses_shared_memory(found):
    assert verdict(found, rule("uses_shared_memory", kernel="smem_kernel"))[0]
    ok, text = verdict(found, rule("uses_shared_memory", kernel="^void child|child\\("))
    assert not ok and "global memory only (LDG/STG)" in text


def test_uses_constant_memory(found):
    ok, text = verdict(found, rule("uses_constant_memory", kernel="shfl_kernel"))
    assert ok and "1 c[0x3] read in shfl_kernel" in text
    assert not verdict(found, rule("uses_constant_memory", kernel="smem_kernel"))[0]


@pytest.fixture(scope="module")
def found_readonly() -> binary.Inspection:
    f = binary.Inspection()
    binary.parse_symbols((DATA / "readonly_symbols.txt").read_text(), f)
    binary.parse_sass((DATA / "readonly_sass.txt").read_text(), f)
    return f


def test_uses_readonly_path(found_readonly):
    assert found_readonly.functions["_Z10ldg_kernelPKfPKiPfi"].readonly == 2
    assert found_readonly.functions["_Z12plain_kernelPKfPKiPfi"].readonly == 0
    ok, text = verdict(found_readonly, rule("uses_readonly_path", kernel="ldg_kernel"))
    assert ok and "2 read-only loads in" in text
    assert verdict(found_readonly, rule("uses_readonly_path", kernel="tex_kernel"))[0]
    ok, text = verdict(found_readonly, rule("uses_readonly_path", kernel="plain_kernel"))
    assert not ok and "plain LDG" in text and "no const __restrict__, no __ldg" in text


def test_uses_texture(found_readonly):
    ok, text = verdict(found_readonly, rule("uses_texture", kernel="tex_kernel"))
    assert ok and "1 texture fetch in" in text
    ok, text = verdict(found_readonly, rule("uses_texture", kernel="ldg_kernel"))
    assert not ok and "not through a texture object" in text


VECTOR_SASS = """
		Function : _Z16vec_plain_kernelPK4int4Pii
        /*00c0*/                   LDG.E.128 R8, desc[UR4][R2.64] ;
		Function : _Z10vec_kernelPK4int4Pii
        /*00c0*/                   LDG.E.128.CONSTANT R8, desc[UR4][R2.64] ;
		Function : _Z13scalar_kernelPKiPii
        /*00c0*/                   LDG.E.64 R8, desc[UR4][R2.64] ;
        /*00d0*/                   LDG.E.CONSTANT R9, desc[UR4][R2.64] ;
"""


def test_uses_vector_loads():
    f = binary.Inspection()
    binary.parse_sass(VECTOR_SASS, f)
    for name in f.functions:
        f.functions[name].kernel = True
    assert verdict(f, rule("uses_vector_loads", kernel="vec_plain"))[0]
    ok, text = verdict(f, rule("uses_vector_loads", kernel="vec_kernel"))
    assert ok and "1 16-byte load in" in text
    ok, text = verdict(f, rule("uses_vector_loads", kernel="scalar"))
    assert not ok and "every global load is 4 or 8 bytes wide" in text


@pytest.fixture(scope="module")
def found_votes() -> binary.Inspection:
    """v.cu of data/technique/README.md: ballot, any/all, __activemask(), atomics nvcc groups
    per warp, a shared-memory count, a copy."""
    f = binary.Inspection()
    binary.parse_symbols((DATA / "vote_symbols.txt").read_text(), f)
    binary.parse_sass((DATA / "vote_sass.txt").read_text(), f)
    return f


def test_parse_sass_counts_votes_on_a_predicate_only(found_votes):
    votes = {name: fn.votes for name, fn in found_votes.functions.items()}
    assert votes == {"_Z13ballot_kernelPKiiPj": 1, "_Z13anyall_kernelPKiiPi": 2,
                     "_Z17activemask_kernelPj": 0, "_Z14grouped_kernelPKiiPiS1_": 0,
                     "_Z13shared_kernelPKiiPi": 0, "_Z11copy_kernelPKiPi": 0}
    assert found_votes.functions["_Z17activemask_kernelPj"].ops["VOTE"] == 1
    assert found_votes.functions["_Z14grouped_kernelPKiiPiS1_"].ops["VOTEU"] == 1
    # A ballot on the uniform datapath (from the reference solution of warp_vote) counts too.
    uniform = binary.Inspection()
    binary.parse_sass("\t\tFunction : k\n        /*0600*/                   "
                         "VOTEU.ANY UR10, UPT, P2 ;\n", uniform)
    assert uniform.functions["k"].votes == 1


def test_uses_warp_vote(found_votes):
    ok, text = verdict(found_votes, rule("uses_warp_vote", kernel="ballot"))
    assert ok and text.endswith("found 1 vote in _Z13ballot_kernelPKiiPj")
    assert verdict(found_votes, rule("uses_warp_vote", kernel="anyall"))[0]
    # Without a kernel regex one kernel that votes is enough.
    assert verdict(found_votes, rule("uses_warp_vote"))[0]


def test_uses_warp_vote_says_what_the_kernel_does_instead(found_votes):
    ok, text = verdict(found_votes, rule("uses_warp_vote", kernel="activemask"))
    assert not ok and text == (
        "expected warp votes on a predicate (VOTE: __ballot_sync, __any_sync, __all_sync) in "
        "kernel _Z17activemask_kernelPj; found none: its VOTEs only read the active mask "
        "(__activemask()); none votes on a predicate")
    # One atomicAdd per element, which nvcc grouped per warp: its VOTEU is no vote of the
    # student's.
    ok, text = verdict(found_votes, rule("uses_warp_vote", kernel="grouped"))
    assert not ok and text.endswith(": its VOTEs only read the active mask, which is how nvcc "
                                    "groups a warp's atomics (ATOMS/ATOMG/RED); none votes on "
                                    "a predicate")
    ok, text = verdict(found_votes, rule("uses_warp_vote", kernel="shared"))
    assert not ok and text.endswith("found none: the kernel counts with atomics "
                                    "(ATOMS/ATOMG/RED), not with votes")
    ok, text = verdict(found_votes, rule("uses_warp_vote", kernel="copy"))
    assert not ok and text.endswith("found none")


def test_manifest_accepts_uses_warp_vote(tmp_path):
    text = VALID + TECHNIQUE.replace('rule = "uses_shuffle"', 'rule = "uses_warp_vote"')
    ex = load_manifest(write(tmp_path, "ch02_x", "tiled", text))
    assert ex.technique[0].rule == "uses_warp_vote"


def test_no_local_memory(found):
    assert verdict(found, rule("no_local_memory", kernel="shfl_kernel|smem_kernel"))[0]
    ok, text = verdict(found, rule("no_local_memory", kernel="local_kernel"))
    assert not ok and "local_kernel: " in text and "LDL/STL" in text
    assert "256 bytes of stack" in text


def test_max_registers(found):
    ok, text = verdict(found, rule("max_registers", kernel="shfl_kernel", value=16))
    assert ok and "11 in shfl_kernel" in text
    ok, text = verdict(found, rule("max_registers", kernel="shfl_kernel", value=8))
    assert not ok and text.endswith("found shfl_kernel: 11 registers")


def test_uses_device_launch(found):
    ok, text = verdict(found, rule("uses_device_launch", kernel="parent"))
    assert ok and "2 device-runtime calls in parent" in text
    assert not verdict(found, rule("uses_device_launch", kernel="child"))[0]


def test_no_library_calls(found):
    ok, text = verdict(found, rule("no_library_calls", value=("cub", "thrust", "cublas")))
    assert not ok
    assert "kernel cub::CUB_300001_SM_900::detail::reduce::DeviceReduceKernel<...>" in text
    assert "host code cub::CUB_300001_SM_900::DeviceReduce::Sum<...>" in text
    assert verdict(found, rule("no_library_calls", value=("thrust", "cublas", "cufft")))[0]


def test_no_library_calls_reads_undefined_host_symbols():
    f = binary.Inspection()
    binary.parse_nm("libx.a[x.o]:\ncublasSgemm_v2 U\n_Z4gemmPKfS0_Pfi T 0 40\n"
                       "cublasCreate_v2 U\n", f)
    ok, text = verdict(f, rule("no_library_calls", value=("cublas",)))
    assert not ok and text == ("expected no call into cublas from your code; found call to "
                               "cublasSgemm_v2; call to cublasCreate_v2")


def test_kernel_regex_matching_nothing_names_the_kernels(found):
    ok, text = verdict(found, rule("uses_shuffle", kernel="reduce_v8"))
    assert not ok and "no kernel matching /reduce_v8/ (kernels: " in text
    assert "shfl_kernel" in text
    # A limit on kernels that are not there proves nothing: a submission with no kernel of
    # its own (it calls the course's, say) must not earn no_local_memory's points.
    assert not verdict(found, rule("no_local_memory", kernel="reduce_v8"))[0]
    ok, text = verdict(binary.Inspection(), rule("no_local_memory"))
    assert not ok and text.endswith("found no __global__ function in your code")
    assert not verdict(binary.Inspection(), rule("max_registers", value=64))[0]


# What the toolkit's cuobjdump 13.0.85 printed on the H100 machine for -symbols (the wheel's
# format is in data/technique/symbols.txt): both must name the kernels.
TOOLKIT_SYMBOLS = """
symbols:
STT_OBJECT       STB_WEAK   STV_DEFAULT  U .nv.reservedSmem.offset0
STT_OBJECT       STB_LOCAL  STV_DEFAULT    c_coefficients
STT_FUNC         STB_GLOBAL STO_ENTRY      _Z23stencil_constant_kernelPKfPfi
STT_FUNC         STB_LOCAL  STO_ENTRY      _ZN61_GLOBAL__N__fa01e012_28_stencil_kernelEPKfPfiS1_
STT_FUNC         STB_GLOBAL STV_DEFAULT    _Z6helperv
"""


def test_parse_symbols_reads_the_toolkits_format_too():
    f = binary.Inspection()
    binary.parse_symbols(TOOLKIT_SYMBOLS, f)
    assert {n for n, fn in f.functions.items() if fn.kernel} == {
        "_Z23stencil_constant_kernelPKfPfi",
        "_ZN61_GLOBAL__N__fa01e012_28_stencil_kernelEPKfPfiS1_"}


def test_device_code_without_a_readable_kernel_is_a_tool_error(monkeypatch, tmp_path):
    outputs = {"-symbols": "symbols:\nSTT_FUNC  STB_GLOBAL  STO_SOMETHING_NEW  _Z1kv\n",
               "-sass": (DATA / "readonly_sass.txt").read_text(), "-res-usage": "", "-elf": ""}
    monkeypatch.setattr(binary, "_tool", lambda args, whole=False: outputs[args[1]])
    with pytest.raises(binary.ToolError, match="named no kernel"):
        binary.inspect(tmp_path / "lib.a", "cuobjdump", None, None)
    assert not verdict(binary.Inspection(), rule("uses_shuffle"))[0]


def test_classify_makes_cases_and_rules(found):
    stage = StageResult("technique", StageStatus.PASSED)
    rules = (rule("uses_shuffle", "shuffles", kernel="smem_kernel", message="reduce in a warp",
                  hint="__shfl_down_sync"),
             rule("uses_shared_memory", "smem", kernel="smem_kernel"))
    technique.classify(stage, rules, found)
    assert stage.status is StageStatus.FAILED
    assert [(c.name, c.status) for c in stage.cases] == [("shuffles", "failed"),
                                                         ("smem", "passed")]
    assert stage.cases[0].message.startswith("reduce in a warp: expected warp shuffles")
    assert stage.cases[0].message.endswith(". Try: __shfl_down_sync")
    assert stage.message == "1 of 2 rules met (shuffles failed)"
    assert stage.details["rules"][0] == {
        "name": "shuffles", "rule": "uses_shuffle", "kernel": "smem_kernel", "passed": False,
        "expected": "warp shuffles (SHFL) in kernel smem_kernel",
        "found": "none: the kernel exchanges values through shared memory (LDS/STS)",
        "voids": "", "points": 0.0, "max_points": 10.0}


def test_missing_cuobjdump_is_an_error_whose_points_are_withheld(monkeypatch, grader_for):
    # Points for a rule nobody checked are not given: a grading machine without cuobjdump
    # must not hand out technique points, nor speed points a library call could have earned.
    monkeypatch.setattr(tools, "find", lambda name, required_for="": None)
    ex = vector_add(technique=(rule("uses_shuffle"),), correctness_points=50)
    stage = technique.run(grader_for(ex).options, ex)
    assert stage.status is StageStatus.ERROR
    assert stage.message == "cuobjdump not found (scripts/setup.sh installs it); rules not checked"
    scoring.score_technique(ex, stage, is_correct=True)
    assert stage.points == 0 and stage.max_points == 10
    assert stage.message.endswith("; its 10 points are withheld")

    voiding = dataclasses.replace(rule("no_library_calls"), name="own_code", points=0,
                                  voids="performance")
    ex = vector_add(technique=(voiding,))
    assert scoring.voided_by_technique(ex, stage) == ["own_code"]
    bench = StageResult("benchmark", StageStatus.PASSED, 40, 40, message="bandwidth: 0.90x")
    scoring.void_performance(bench, ["own_code"], unchecked=True)
    assert bench.points == 0 and bench.status is StageStatus.FAILED
    assert bench.message.startswith(
        "performance points voided: technique rule own_code could not be checked")


def test_missing_nm_is_an_error_for_api_rules(monkeypatch, grader_for, tmp_path):
    # An avoids_api rule with no host symbols to read would pass for want of evidence.
    monkeypatch.setattr(tools, "find",
                        lambda name, required_for="": None if name == "nm" else "/bin/true")
    ex = vector_add(technique=(rule("avoids_api", value=("cudaDeviceSynchronize",)),))
    grader = grader_for(ex)
    (grader.options.build_dir / "libvector_add_submission.a").write_bytes(b"!<arch>\n")
    stage = technique.run(grader.options, ex)
    assert stage.status is StageStatus.ERROR
    assert stage.message == "nm not found (binutils); rules about API calls not checked"


def test_the_pass_on_what_ran_reads_the_library_the_static_pass_read(monkeypatch, grader_for,
                                                                      found):
    # The library is disassembled once per grade: the pass on the kernels the tests launched
    # takes the static pass's reading, while the library is the same file, and only once.
    monkeypatch.setattr(tools, "find", lambda name, required_for="": "/bin/true")
    reads = []

    def inspect(library, *tools_):
        reads.append(library.name)
        return found
    monkeypatch.setattr(technique, "inspect", inspect)
    ex = vector_add(technique=(rule("uses_shuffle"),))
    options = grader_for(ex).options
    library = options.build_dir / "libvector_add_submission.a"
    library.write_bytes(b"!<arch>\n")
    static = technique.run(options, ex)
    on_what_ran = technique.run(options, ex, launched=set(found.functions))
    assert len(reads) == 1 and static.status == on_what_ran.status
    technique.run(options, ex, launched=set(found.functions))  # taken already: read again
    assert len(reads) == 2
    technique.run(options, ex)
    library.write_bytes(b"!<arch>\nrebuilt\n")  # another file since: read again
    technique.run(options, ex, launched=set(found.functions))
    assert len(reads) == 4


def test_tools_find_the_wheel_in_the_course_venv(monkeypatch, tmp_path):
    binary = tmp_path / ".venv/lib/python3.11/site-packages/nvidia/cu13/bin/cuobjdump"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    monkeypatch.setattr(tools, "ROOT", tmp_path)
    monkeypatch.setattr(tools.sys, "path", [])
    monkeypatch.setattr(tools, "CUDA_BIN_DIRS", [])
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    monkeypatch.setattr(tools, "_beside_python", lambda name: None)
    assert tools.find("cuobjdump") == str(binary)


# ------------------------------------------------------------------------------ manifest

TECHNIQUE = """
[[technique]]
name = "shuffles"
rule = "uses_shuffle"
kernel = "reduce_.*_kernel"
points = 10
message = "m"
hint = "h"

[[technique]]
name = "own_code"
rule = "no_library_calls"
value = ["cub", "cublas"]
voids = "performance"

[[technique]]
name = "registers"
rule = "max_registers"
value = 64
points = 5
"""


def api_found(nm_text: str) -> binary.Inspection:
    f = binary.Inspection()
    binary.parse_nm(nm_text, f)
    return f


# What nvcc's host code references for a launcher that forks onto a worker stream and back:
# the per-thread-default-stream variant of one call, a defined function that must not count.
STREAM_NM = ("libx.a[x.o]:\ncudaEventRecord_ptsz U\ncudaStreamWaitEvent U\n"
             "cudaLaunchKernel U\n_Z12run_pipelinePKfPf T 0 80\ncudaDeviceSynchronize T 0 8\n")


def test_calls_api_needs_every_name_and_reads_variants():
    f = api_found(STREAM_NM)
    ok, text = verdict(f, rule("calls_api", value=("cudaEventRecord", "cudaStreamWaitEvent")))
    assert ok, text
    ok, text = verdict(f, rule("calls_api", value=("cudaStreamWaitEvent",
                                                   "cudaGraphLaunch",
                                                   "cudaGraphInstantiate|cudaStreamBeginCapture")))
    assert not ok
    assert text == ("expected calls to cudaStreamWaitEvent, cudaGraphLaunch, "
                    "cudaGraphInstantiate or cudaStreamBeginCapture; found no call to "
                    "cudaGraphLaunch, cudaGraphInstantiate or cudaStreamBeginCapture")
    # One alternative is enough.
    assert verdict(f, rule("calls_api", value=("cudaGraphLaunch|cudaLaunchKernel",)))[0]


def test_avoids_api_fails_on_a_call_not_on_a_definition():
    f = api_found(STREAM_NM)
    # cudaDeviceSynchronize is defined here (T), not called: a function of the student's own
    # with that name is no call into the runtime.
    ok, text = verdict(f, rule("avoids_api", value=("cudaDeviceSynchronize",
                                                    "cudaStreamSynchronize")))
    assert ok and text.endswith("found none")
    ok, text = verdict(f, rule("avoids_api", value=("cudaStreamSynchronize|cudaEventRecord",)))
    assert not ok and text == ("expected no call to cudaStreamSynchronize, cudaEventRecord; "
                               "found call to cudaEventRecord")


API_TECHNIQUE = """
[[technique]]
name = "events"
rule = "calls_api"
value = ["cudaEventRecord", "cudaGraphInstantiate|cudaGraphInstantiateWithFlags"]
points = 10
"""


def test_manifest_api_rules(tmp_path):
    ex = load_manifest(write(tmp_path, "ch06_x", "dag", VALID + API_TECHNIQUE))
    assert ex.technique[0].value == ("cudaEventRecord",
                                     "cudaGraphInstantiate|cudaGraphInstantiateWithFlags")
    for bad, fragment in ((API_TECHNIQUE.replace('"cudaEventRecord", ', '"cuda Event", '),
                           "not a function name"),
                          (API_TECHNIQUE.replace('points = 10', 'points = 10\nkernel = "k"'),
                           "whole object"),
                          (API_TECHNIQUE.replace(
                              'value = ["cudaEventRecord", "cudaGraphInstantiate|'
                              'cudaGraphInstantiateWithFlags"]', 'value = []'), "at least one")):
        with pytest.raises(ManifestError) as info:
            load_manifest(write(tmp_path, "ch06_x", "dag", VALID + bad))
        assert fragment in str(info.value)


def test_manifest_technique_entries(tmp_path):
    ex = load_manifest(write(tmp_path, "ch02_x", "tiled", VALID + TECHNIQUE))
    assert ex.technique == (
        Technique("shuffles", "uses_shuffle", 10.0, "reduce_.*_kernel", None, "", "m", "h"),
        Technique("own_code", "no_library_calls", 0.0, "", ("cub", "cublas"), "performance"),
        Technique("registers", "max_registers", 5.0, value=64))
    assert ex.max_points == 115


@pytest.mark.parametrize("change, field, fragment", [
    (('rule = "uses_shuffle"', 'rule = "uses_magic"'), "technique[0].rule", "unknown rule"),
    (('kernel = "reduce_.*_kernel"', 'kernel = "reduce_("'), "technique[0].kernel",
     "not a valid regex"),
    (('points = 10\nmessage', 'points = 10\nvalue = 3\nmessage'), "technique[0].value",
     "takes no value"),
    (('value = ["cub", "cublas"]', 'value = ["cub", "eigen"]'), "technique[1].value",
     "unknown value 'eigen'"),
    (('value = ["cub", "cublas"]', 'value = []'), "technique[1].value", "at least one"),
    (('voids = "performance"', 'voids = "correctness"'), "technique[1].voids",
     "unknown value"),
    (('voids = "performance"', 'kernel = "k"'), "technique[1].kernel", "whole object"),
    (('voids = "performance"\n', ''), "technique[1].points", "greater than 0"),
    (('value = 64', 'value = 64.5'), "technique[2].value", "whole number"),
    (('rule = "max_registers"\nvalue = 64\n', 'rule = "max_registers"\n'),
     "technique[2].value", "is required"),
    (('name = "registers"', 'name = "shuffles"'), "technique[2].name", "duplicate"),
    (('points = 5', 'points = 5\nlimit = 3'), "technique[2].limit", "unknown field")])
def test_manifest_technique_errors(tmp_path, change, field, fragment):
    text = (VALID + TECHNIQUE).replace(*change)
    with pytest.raises(ManifestError) as error:
        load_manifest(write(tmp_path, "ch02_x", "tiled", text))
    assert error.value.field == field, str(error.value)
    assert fragment in str(error.value)


def test_manifest_voids_needs_performance(tmp_path):
    text = VALID.split("[[performance]]")[0] + TECHNIQUE
    with pytest.raises(ManifestError, match="no \\[\\[performance\\]\\] points to void"):
        load_manifest(write(tmp_path, "ch02_x", "tiled", text))


def test_the_manifest_takes_its_rules_from_the_registry(tmp_path):
    """Rules are declared once, in technique.RULES; the manifest's errors name them from it."""
    for change, fragment in (
            (('rule = "uses_shuffle"', 'rule = "uses_magic"'),
             f"(rules: {', '.join(technique.RULES)})"),
            (('points = 10\nmessage', 'points = 10\nvalue = 3\nmessage'),
             "uses_shuffle takes no value (only max_registers, no_library_calls, calls_api "
             "and avoids_api do)")):
        with pytest.raises(ManifestError) as error:
            load_manifest(write(tmp_path, "ch02_x", "tiled", (VALID + TECHNIQUE).replace(*change)))
        assert fragment in str(error.value)
    assert "uses_magic" not in technique.RULES and "uses_shuffle" in technique.KERNEL_RULES
    assert technique.API_RULES == ("calls_api", "avoids_api")


def test_course_total_is_unchanged():
    from grader.manifest import discover
    exercises = discover(ROOT)
    # chapters 01-04: 3780 points (3080 before warp_vote, grid_sync, single_pass_reduce,
    # atomic_scopes, matmul_v4_warp_tiling, matmul_v5_async_copy and cluster_histogram);
    # chapter 05 adds five exercises of 100, chapter 06 nine, chapter 07 four
    assert sum(ex.max_points for ex in exercises) == 5580
    assert all(ex.max_points in (40, 50, 100) for ex in exercises)


# ------------------------------------------------------------------------------- scoring

EX = vector_add(correctness_points=50,
                technique=(rule("uses_shuffle", "shuffles"),
                           rule("no_library_calls", "own_code", points=0,
                                value=("cub",), voids="performance")))


def technique_stage(shuffles=True, own_code=True) -> StageResult:
    stage = StageResult("technique", StageStatus.PASSED)
    for r, ok in zip(EX.technique, (shuffles, own_code)):
        stage.cases.append(model.CaseResult(r.name, "passed" if ok else "failed", "m"))
        stage.details.setdefault("rules", []).append(
            {"name": r.name, "rule": r.rule, "kernel": "", "passed": ok, "expected": "e",
             "found": "f", "voids": r.voids, "points": 0.0, "max_points": r.points})
    if not (shuffles and own_code):
        stage.status = StageStatus.FAILED
        stage.message = "1 of 2 rules met"
    return stage


def graded(stage, tests_passed=True, rate=900.0):
    from test_scoring import benchmarked, built, ran_tests, sanitized
    tests = ran_tests() if tests_passed else ran_tests(passed=2)
    stages = [built(), stage, tests, sanitized()]
    if tests_passed:
        stages.append(benchmarked(rate=rate))
    return scoring.grade(EX, stages), stages


def test_scoring_full_marks_with_rules_met():
    r, _ = graded(technique_stage())
    assert r.status is ExerciseStatus.PASSED and r.score == r.max_score == 100


def test_scoring_failed_rule_costs_its_points():
    stage = technique_stage(shuffles=False)
    r, _ = graded(stage)
    assert r.status is ExerciseStatus.PARTIAL and r.score == 90
    assert stage.points == 0 and stage.max_points == 10
    assert r.message == "technique: 1 of 2 rules met"


def test_scoring_voids_performance():
    stage = technique_stage(own_code=False)
    r, stages = graded(stage)
    bench = stages[-1]
    assert r.status is ExerciseStatus.PARTIAL and r.score == 60
    assert bench.points == 0 and bench.status is StageStatus.FAILED
    assert all(m.points == 0 for m in bench.metrics)
    assert bench.message.startswith("performance points voided: technique rule own_code failed")
    assert "performance points voided" in r.message


EX_ALL = vector_add(correctness_points=50,
                    technique=(rule("uses_device_launch", "device_launch",
                                    voids="all", message="launches from the device",
                                    hint="launch the child from the kernel"),))


def device_launch_stage(passed: bool, status=None) -> StageResult:
    stage = StageResult("technique", status or (StageStatus.PASSED if passed
                                                 else StageStatus.FAILED))
    r = EX_ALL.technique[0]
    stage.details["rules"] = [{"name": r.name, "rule": r.rule, "kernel": "", "passed": passed,
                               "expected": "e", "found": "f", "voids": r.voids, "points": 0.0,
                               "max_points": r.points}]
    return stage


def graded_all(stage):
    from test_scoring import benchmarked, built, ran_tests, sanitized
    stages = [built(), stage, ran_tests(), sanitized(), benchmarked(rate=900.0)]
    return scoring.grade(EX_ALL, stages), stages


def test_scoring_voids_everything():
    # A correct, fast, host-only answer to a technique exercise: nothing is earned.
    r, stages = graded_all(device_launch_stage(passed=False))
    assert r.status is ExerciseStatus.FAILED and r.score == 0
    assert all(s.points == 0 for s in stages)
    assert all(m.points == 0 for s in stages for m in s.metrics)
    assert r.message.startswith("technique rule device_launch failed, which voids every point")
    assert "launches from the device" in r.message and "Try: launch the child" in r.message
    assert "voided by the technique stage" in stages[2].message  # the tests' 50 points


def test_scoring_voids_everything_only_when_the_rule_fails():
    r, _ = graded_all(device_launch_stage(passed=True))
    assert r.status is ExerciseStatus.PASSED and r.score == r.max_score == 100


def test_scoring_voids_everything_when_unchecked():
    stage = device_launch_stage(passed=False, status=StageStatus.ERROR)
    stage.details["rules"] = []
    r, _ = graded_all(stage)
    assert r.status is ExerciseStatus.UNCHECKED and r.score == 0
    assert "could not be checked" in r.message


def test_manifest_voids_all_needs_no_performance(tmp_path):
    text = VALID.split("[[performance]]")[0] + TECHNIQUE.replace(
        'voids = "performance"', 'voids = "all"')
    ex = load_manifest(write(tmp_path, "ch02_x", "tiled", text))
    assert [t.voids for t in ex.technique] == ["", "all", ""]


def test_scoring_rules_need_a_correct_exercise():
    stage = technique_stage()
    r, _ = graded(stage, tests_passed=False)
    assert r.status is ExerciseStatus.FAILED and stage.points == 0
    assert stage.message.endswith("its 10 points need a correct exercise")


def test_build_only_reports_rules_without_points():
    stage = technique_stage(shuffles=False)
    from test_scoring import built
    r = scoring.not_run(EX, [built(), stage], "compiled (--build-only: not run)")
    assert r.status is ExerciseStatus.SKIPPED and r.score == 0
    assert stage.max_points == 10 and stage.points == 0


# ------------------------------------------------------------------- report and renderings

def report_with_technique() -> model.Report:
    stage = technique_stage(shuffles=False)
    r, _ = graded(stage)
    return model.Report(submission="s", seed=1, started_at="t", exercises=[r])


def test_report_round_trip():
    report = report_with_technique()
    again = model.Report.from_dict(json.loads(json.dumps(report.to_dict())))
    assert again == report
    stage = again.exercises[0].stage("technique")
    assert stage.cases[0].status is CaseStatus.FAILED
    assert stage.details["rules"][0]["name"] == "shuffles"


def test_terminal_and_junit():
    report = report_with_technique()
    text = render.terminal(report, io.StringIO())
    assert "technique: failed - 1 of 2 rules met" in text and "✗ shuffles [failed]" in text
    row = next(l for l in text.splitlines() if l.startswith("  vector_add "))
    assert " 1/2 " in row
    root = ET.fromstring(render.junit_xml(report))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["technique/shuffles"].find("failure") is not None
    assert cases["technique/own_code"].find("failure") is None


def test_build_only_terminal_shows_broken_rules():
    stage = technique_stage(shuffles=False)
    from test_scoring import built
    r = scoring.not_run(EX, [built(), stage], "compiled (--build-only: not run)")
    text = render.terminal(model.Report(submission="s", seed=1, started_at="t",
                                        exercises=[r]), io.StringIO())
    assert "── ch01_programming_model/vector_add: skipped" in text and "✗ shuffles" in text


def test_check_report_techniques(tmp_path):
    report = report_with_technique()
    path = tmp_path / "r.json"
    render.write_json(report, path)
    r = subprocess.run([PYTHON, str(ROOT / "scripts" / "check_report.py"), str(path),
                        "--techniques"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "ch01_programming_model/vector_add: technique failed: 1 of 2 rules met" in r.stdout
    report.exercises[0].stages[1] = dataclasses.replace(technique_stage(),
                                                        status=StageStatus.PASSED)
    render.write_json(report, path)
    r = subprocess.run([PYTHON, str(ROOT / "scripts" / "check_report.py"), str(path),
                        "--techniques"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.endswith("all technique rules met\n")
