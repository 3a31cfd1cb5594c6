"""The uses_system_atomics technique rule: which SASS counts as a system-scope atomic on global
memory, and what the verdict says when a kernel's atomics are device-scope only. The SASS is
what nvcc 13.0 and the cuobjdump 13 wheel printed for sm_90 (encodings cut)."""

from __future__ import annotations

import pytest

from grader import binary
from grader.manifest import Technique
from helpers import sass_inspection
from test_technique import verdict

SASS = """
		Function : _Z7sys_retPjS_
        /*0080*/               @P0 ATOMG.E.ADD.STRONG.SYS PT, R3, desc[UR4][R2.64], R9 ;
		Function : _Z10sys_legacyPj
        /*0080*/               @P0 REDG.E.ADD.STRONG.SYS desc[UR4][R2.64], R5 ;
		Function : _Z7sys_refPy
        /*00f0*/                   ATOM.E.ADD.64.STRONG.SYS P0, RZ, desc[UR8][R2.64], R4 ;
        /*0190*/                   ATOMS.CAST.SPIN.64 R6, [R3], R4, R6 ;
		Function : _Z10dev_legacyPj
        /*0080*/               @P0 REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R5 ;
		Function : _Z11block_countPj
        /*0080*/                   ATOMS.ADD RZ, [R2], R5 ;
"""


@pytest.fixture(scope="module")
def found() -> binary.Inspection:
    return sass_inspection(SASS)


def check(found, kernel):
    return verdict(found, Technique(name="system_atomics", rule="uses_system_atomics",
                                    points=0.0, kernel=kernel))


@pytest.mark.parametrize("name, count", [
    ("_Z7sys_retPjS_", 1),       # atomicAdd_system whose result is used: ATOMG ... .SYS
    ("_Z10sys_legacyPj", 1),     # atomicAdd_system, result unused: REDG ... .SYS
    ("_Z7sys_refPy", 1),         # atomic_ref<thread_scope_system>::fetch_add: ATOM ... .SYS
    ("_Z10dev_legacyPj", 0),     # atomicAdd: device scope (.GPU)
    ("_Z11block_countPj", 0)])   # shared-memory atomics never count
def test_parse_sass_counts_system_scope_global_atomics(found, name, count):
    assert found.functions[name].system_atomics == count


def test_a_system_scope_atomic_meets_the_rule(found):
    ok, text = check(found, "sys_legacy")
    assert ok and text.endswith("found 1 system-scope atomic in _Z10sys_legacyPj")


def test_device_scope_atomics_fail_and_say_why(found):
    ok, text = check(found, "dev_legacy")
    assert not ok
    assert text.startswith("expected system-scope atomics on global memory (ATOM/RED .SYS: "
                           "atomicAdd_system, or atomic_ref with thread_scope_system)")
    assert text.endswith("found none: its atomics are device-scope (.GPU), which the host's "
                         "updates to the same word race with")


def test_a_kernel_without_global_atomics_gets_no_explanation(found):
    ok, text = check(found, "block_count")
    assert not ok and text.endswith("; found none")
