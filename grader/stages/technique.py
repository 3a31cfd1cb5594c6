"""The technique stage: reads the student's compiled code, never runs it, and checks the
manifest's [[technique]] rules (did the kernel use shuffles, warp votes, shared or constant
memory, stay out of local memory, launch from the device, fence at device scope, leave
CUB and cuBLAS alone).

It inspects only the student's static library (lib<name>_submission.a, meson.build), so course
code can neither satisfy nor break a rule. Device code is read with the toolkit's cuobjdump
(-symbols: which functions are kernels; -sass: instructions; -res-usage: registers, stack,
local and shared bytes; -elf: relocations, i.e. what a function calls), host symbols with nm.
Each rule's verdict is a case of the stage (passed or failed, with what was expected and what
was found) and an entry of details["rules"]; grader/scoring.py awards the points.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import proc, tools
from grader.manifest import Exercise, Technique
from grader.model import CaseResult, CaseStatus, StageResult, StageStatus
from grader.stages.common import GradeOptions

TOOL_TIMEOUT_S = 120
OUTPUT_LIMIT = 64 * 1024 * 1024  # -elf of an object with CUB kernels runs to megabytes

# C++ namespaces (by their mangled prefix) and C symbol prefixes of the libraries
# no_library_calls can name. Kernels in a library namespace are the library's, not the
# student's: the uses_* rules never count them.
NAMESPACES = {"cub": "cub", "thrust": "thrust"}
C_PREFIXES = {"cublas": "cublas", "cudnn": "cudnn", "cufft": "cufft", "curand": "curand",
              "cusparse": "cusparse", "cusolver": "cusolver"}
LIBRARY_NAMESPACES = ("cub", "thrust", "cuda", "std")

SHARED_OPS = ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDGSTS")
LOCAL_OPS = ("LDL", "STL")
# Warp votes (VOTEU: the uniform datapath's form) and atomics, for uses_warp_vote. A vote on the
# constant predicate PT only reads the active mask: __activemask(), and what nvcc emits to
# group a warp's atomicAdds into one, so those are not counted as votes.
VOTE_OPS = ("VOTE", "VOTEU")
CONSTANT_PREDICATES = ("PT", "!PT")
ATOMIC_OPS = ("ATOMS", "ATOMG", "ATOM", "RED", "REDG")
# Texture fetches (TEX/TLD/TLD4 and their compact S forms, TXD with gradients); TXQ only queries.
TEXTURE_OPS = ("TEX", "TEXS", "TLD", "TLDS", "TLD4", "TLD4S", "TXD")
DEVICE_LAUNCH = re.compile(r"(LaunchDevice|GetParameterBuffer)")
# MEMBAR scopes that order a thread's memory accesses for every block of the grid: GPU (SYS
# includes it; GL is how SASS before Volta spelled GPU). __threadfence() is MEMBAR.SC.GPU,
# __threadfence_system() MEMBAR.SC.SYS, a release or acq_rel atomic_ref at device scope
# MEMBAR.ALL.GPU; __threadfence_block() is MEMBAR.SC.CTA, which orders nothing for other blocks.
DEVICE_FENCE_SCOPES = {"GPU", "SYS", "GL"}
# Atomics on global (or generic) addresses, for uses_memory_fence's explanation.
GLOBAL_ATOMIC_OPS = tuple(op for op in ATOMIC_OPS if op != "ATOMS")

_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_INSTRUCTION = re.compile(
    r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?\s*([^;]*);")
_RES_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):\s*$")
_RES_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")
# A kernel's line in -symbols: "FUNC WEAK DEFAULT ENTRY <name>" from the cuobjdump wheel,
# "STT_FUNC STB_GLOBAL STO_ENTRY <name>" from the toolkit's cuobjdump of the same release.
_ENTRY = re.compile(r"^(?:STT_)?FUNC\s+(?:\S+\s+)*?(?:STO_)?ENTRY\s+(\S+)\s*$")
_RELA = re.compile(r"^\.section\s+\.rela\.text\.(\S+)")
NM_LINE = re.compile(r"^(\S+)\s+([A-Za-z?])(?:\s|$)")


@dataclass
class Function:
    """One device function of the object, merged over members and architectures."""
    name: str                       # mangled
    kernel: bool = False
    ops: dict = field(default_factory=dict)        # opcode -> count
    bank3: int = 0                  # instructions reading c[0x3][...] (__constant__ data)
    readonly: int = 0               # LDG.E...CONSTANT: global loads on the read-only path
    vector: int = 0                 # 16-byte global loads (LDG.E.128, LDG.E.ENL2.256 too)
    fences: int = 0                 # MEMBARs at GPU or system scope (DEVICE_FENCE_SCOPES)
    block_fences: int = 0           # MEMBARs at block scope (MEMBAR.SC.CTA, MEMBAR.ALL.CTA)
    votes: int = 0                  # VOTE/VOTEU on a predicate (ballot, any, all)
    system_atomics: int = 0         # global atomics at system scope (ATOM/ATOMG/RED/REDG .SYS)
    registers: int = 0
    stack: int = 0
    local: int = 0
    shared: int = 0
    calls: set = field(default_factory=set)        # symbols its relocations name


@dataclass
class Inspection:
    functions: dict = field(default_factory=dict)  # mangled name -> Function
    host: list = field(default_factory=list)       # (mangled name, nm type)
    demangled: dict = field(default_factory=dict)  # mangled -> demangled

    def function(self, name: str) -> Function:
        return self.functions.setdefault(name, Function(name))

    def pretty(self, name: str) -> str:
        return self.demangled.get(name, name)


# ------------------------------------------------------------------------------- parsers

def parse_symbols(text: str, into: Inspection) -> None:
    """cuobjdump -symbols: FUNC ... ENTRY lines are the __global__ functions."""
    for line in text.splitlines():
        m = _ENTRY.match(line.strip())
        if m:
            into.function(m.group(1)).kernel = True


def parse_sass(text: str, into: Inspection) -> None:
    """cuobjdump -sass: opcode counts, constant-bank-3 reads, read-only and vector loads, and
    votes on a predicate per function."""
    current = None
    for line in text.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m:
            current = into.function(m.group(1))
            continue
        m = _SASS_INSTRUCTION.match(line)
        if m and current is not None:
            op = m.group(1)
            current.ops[op] = current.ops.get(op, 0) + 1
            if "c[0x3][" in m.group(3):
                current.bank3 += 1
            if op == "LDG" and ".CONSTANT" in (m.group(2) or ""):
                current.readonly += 1
            if op == "LDG" and re.search(r"\.(128|256)\b", m.group(2) or ""):
                current.vector += 1
            if op in GLOBAL_ATOMIC_OPS and "SYS" in (m.group(2) or "").split("."):
                current.system_atomics += 1
            if op == "MEMBAR":
                scopes = set((m.group(2) or "").split("."))
                if scopes & DEVICE_FENCE_SCOPES:
                    current.fences += 1
                elif "CTA" in scopes:
                    current.block_fences += 1
            # The voted predicate is the last operand: VOTE.ANY R0, PT, P1 (a ballot),
            # VOTE.ALL P0, P1; VOTE.ANY R0, PT, PT is __activemask().
            if op in VOTE_OPS and \
                    m.group(3).split(",")[-1].strip() not in CONSTANT_PREDICATES:
                current.votes += 1


def parse_res_usage(text: str, into: Inspection) -> None:
    """cuobjdump -res-usage: ' Function NAME:' then 'REG:n STACK:n SHARED:n LOCAL:n ...'."""
    current = None
    for line in text.splitlines():
        m = _RES_FUNCTION.match(line)
        if m:
            current = into.function(m.group(1))
            continue
        if current is None or "REG:" not in line:
            continue
        values = {k: int(v) for k, v in _RES_FIELD.findall(line)}
        current.registers = max(current.registers, values.get("REG", 0))
        current.stack = max(current.stack, values.get("STACK", 0))
        current.local = max(current.local, values.get("LOCAL", 0))
        current.shared = max(current.shared, values.get("SHARED", 0))
        current = None


def parse_relocations(text: str, into: Inspection) -> None:
    """cuobjdump -elf: the symbols each function's .rela.text section names (callees,
    __constant__ variables, the device runtime's launch entry points)."""
    current = None
    for line in text.splitlines():
        m = _RELA.match(line)
        if m:
            current = into.function(m.group(1))
            continue
        if current is None:
            continue
        parts = line.split()
        if not parts or line.startswith("."):
            current = None
        elif len(parts) >= 3 and parts[0].startswith("0x"):
            current.calls.add(parts[1])


def parse_nm(text: str, into: Inspection) -> None:
    """nm -P: 'NAME TYPE [VALUE SIZE]' per symbol; member headers ('lib.a[x.o]:') skipped."""
    for line in text.splitlines():
        if not line or line.endswith(":"):
            continue
        m = NM_LINE.match(line)
        if m:
            into.host.append((m.group(1), m.group(2)))


def in_namespace(mangled: str, namespace: str) -> bool:
    """A mangled name declared in namespace (functions, statics local to them, vtables and
    typeinfo); the host stub of a kernel (__device_stub_...) included."""
    mangled = mangled.removeprefix("__device_stub_")
    return re.match(rf"_Z(?:T[VIS])?Z?N[rVKRO]*{len(namespace)}{namespace}(?:\d|[A-Z])",
                    mangled) is not None


# ------------------------------------------------------------------------------ running

class ToolError(Exception):
    """A tool could not read the object: the stage is in error, not the student's code."""


def _tool(args: list[str]) -> str:
    result = proc.run(args, TOOL_TIMEOUT_S, output_limit=OUTPUT_LIMIT)
    if result.returncode != 0:
        text = result.output.strip()
        if "does not contain device code" in text or "no device code" in text.lower():
            return ""
        last = next((l for l in reversed(text.splitlines()) if l.strip()), "")
        raise ToolError(f"{Path(args[0]).name} {args[1]} failed ({result.describe_exit()}): "
                        f"{last.strip()[:300]}")
    return result.output


def demangle(names: list[str], cxxfilt: str | None) -> dict[str, str]:
    """Mangled -> readable names, or {} where c++filt is missing or fails."""
    if cxxfilt is None or not names:
        return {}
    try:
        result = subprocess.run([cxxfilt], input="\n".join(names) + "\n",
                                capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return {}
    lines = result.stdout.splitlines()
    return dict(zip(names, lines)) if result.returncode == 0 and len(lines) == len(names) \
        else {}


def inspect(library: Path, cuobjdump: str, nm: str | None, cxxfilt: str | None) -> Inspection:
    found = Inspection()
    lib = str(library)
    parse_symbols(_tool([cuobjdump, "-symbols", lib]), found)
    parse_sass(_tool([cuobjdump, "-sass", lib]), found)
    parse_res_usage(_tool([cuobjdump, "-res-usage", lib]), found)
    parse_relocations(_tool([cuobjdump, "-elf", lib]), found)
    if any(f.ops for f in found.functions.values()) and \
            not any(f.kernel for f in found.functions.values()):
        # Device code with no kernel: a symbol table this parser cannot read (device
        # functions nothing launches are not compiled without -rdc, and with -rdc a
        # submission without kernels is judged wrongly either way).
        raise ToolError("cuobjdump -symbols named no kernel although the library has device "
                        "code: its output format is not one the grader reads")
    if nm:
        parse_nm(_tool([nm, "-P", lib]), found)
    # Only for messages and kernel regexes; mangled names serve when it fails.
    found.demangled = demangle(sorted(set(found.functions) | {n for n, _ in found.host}),
                               cxxfilt)
    return found


def run(options: GradeOptions, ex: Exercise) -> StageResult:
    stage = StageResult("technique", StageStatus.PASSED)
    cuobjdump = tools.find("cuobjdump")
    if cuobjdump is None:
        stage.status = StageStatus.ERROR
        stage.message = "cuobjdump not found (scripts/setup.sh installs it); rules not checked"
        return stage
    library = options.build_dir / f"lib{ex.name}_submission.a"
    if not library.is_file():
        stage.status = StageStatus.ERROR
        stage.message = f"{library.name} not found in the build directory; rules not checked"
        return stage
    nm = tools.find("nm")
    if nm is None and any(rule.rule in ("calls_api", "avoids_api") for rule in ex.technique):
        # Without the host symbols an avoids_api rule would pass for want of evidence.
        stage.status = StageStatus.ERROR
        stage.message = "nm not found (binutils); rules about API calls not checked"
        return stage
    start = time.monotonic()
    try:
        found = inspect(library, cuobjdump, nm, tools.find("c++filt"))
    except ToolError as error:
        stage.status = StageStatus.ERROR
        stage.message = f"{error}; rules not checked"
        return stage
    stage.duration_s = round(time.monotonic() - start, 2)
    classify(stage, ex.technique, found)
    return stage


def classify(stage: StageResult, rules: tuple[Technique, ...], found: Inspection) -> None:
    """Each rule's verdict as a case and a details["rules"] entry; the stage fails with any."""
    verdicts = []
    for rule in rules:
        passed, expected, seen = check(rule, found)
        message = f"expected {expected}; found {seen}"
        if not passed and rule.message:
            message = f"{rule.message}: {message}"
        if not passed and rule.hint:
            message += f". Try: {rule.hint}"
        stage.cases.append(CaseResult(rule.name,
                                      CaseStatus.PASSED if passed else CaseStatus.FAILED,
                                      message))
        verdicts.append({"name": rule.name, "rule": rule.rule, "kernel": rule.kernel,
                         "passed": passed, "expected": expected, "found": seen,
                         "voids": rule.voids, "points": 0.0, "max_points": rule.points})
    stage.details["rules"] = verdicts
    failed = [c for c in stage.cases if c.status != CaseStatus.PASSED]
    stage.status = StageStatus.FAILED if failed else StageStatus.PASSED
    # The cases say what was expected and found; the stage names the rules that failed.
    stage.message = f"{len(rules) - len(failed)} of {len(rules)} rules met" + (
        f" ({', '.join(c.name for c in failed)} failed)" if failed else "")


# -------------------------------------------------------------------------------- rules

def _library_function(name: str) -> bool:
    return any(in_namespace(name, ns) for ns in LIBRARY_NAMESPACES)


def selected_kernels(rule: Technique, found: Inspection) -> list[Function]:
    """The kernels a rule applies to: those whose demangled name matches `kernel`, or every
    kernel of the student's object outside the libraries' namespaces."""
    kernels = [f for f in found.functions.values() if f.kernel]
    if rule.kernel:
        pattern = re.compile(rule.kernel)
        return [f for f in kernels if pattern.search(found.pretty(f.name))]
    return [f for f in kernels if not _library_function(f.name)]


def closure(kernel: Function, found: Inspection) -> list[Function]:
    """The kernel and the device functions it calls, transitively (with -rdc a callee is a
    function of its own; without, it lies inside the kernel's code)."""
    seen, todo = {kernel.name: kernel}, [kernel]
    while todo:
        for name in todo.pop().calls:
            callee = found.functions.get(name)
            if callee is not None and name not in seen and not callee.kernel:
                seen[name] = callee
                todo.append(callee)
    return list(seen.values())


def _short(name: str, limit: int = 90) -> str:
    """A demangled function name without its return type and parameters, e.g.
    complete_unroll_kernel<256>; cut to limit characters."""
    name = name.removeprefix("void ")
    depth = 0
    for i, ch in enumerate(name):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0 and i > 0:
            name = name[:i]
            break
    return name if len(name) <= limit else name[:limit - 3] + "..."


def _bare(name: str) -> str:
    """A demangled name without template arguments, return type and parameters, e.g.
    cub::CUB_300001_SM_900::DeviceReduce::Sum<...>: enough to say what was called."""
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
            if depth == 1:
                out.append("<...>")
        elif ch == ">":
            depth -= 1
        elif depth == 0:
            if ch == "(":
                break
            out.append(ch)
    return "".join(out).split(" ")[-1]


def _which(rule: Technique, found: Inspection, kernels: list[Function]) -> str:
    names = ", ".join(_short(found.pretty(k.name)) for k in kernels[:4])
    more = f" and {len(kernels) - 4} more" if len(kernels) > 4 else ""
    return f"kernel {names}{more}" if len(kernels) == 1 else f"kernels {names}{more}"


def _no_kernel(rule: Technique, found: Inspection) -> str:
    if not rule.kernel:
        return "no __global__ function in your code"
    names = [_short(found.pretty(f.name)) for f in found.functions.values()
             if f.kernel and not _library_function(f.name)]
    return (f"no kernel matching /{rule.kernel}/ (kernels: "
            f"{', '.join(names[:6]) if names else 'none'})")


def _count(ops: dict, names: tuple[str, ...]) -> int:
    return sum(ops.get(n, 0) for n in names)


def _merged_ops(functions: list[Function]) -> dict:
    ops: dict = {}
    for f in functions:
        for op, n in f.ops.items():
            ops[op] = ops.get(op, 0) + n
    return ops


def check(rule: Technique, found: Inspection) -> tuple[bool, str, str]:
    """(passed, what was expected, what was found) for one rule."""
    if rule.rule == "no_library_calls":
        return _no_library_calls(rule, found)
    if rule.rule in ("calls_api", "avoids_api"):
        return _api_calls(rule, found)
    kernels = selected_kernels(rule, found)
    where = _which(rule, found, kernels) if kernels else \
        (f"kernels matching /{rule.kernel}/" if rule.kernel else "your kernels")
    if rule.rule == "uses_shuffle":
        return _uses(rule, found, kernels, where, "warp shuffles (SHFL)",
                     lambda fs: _count(_merged_ops(fs), ("SHFL",)), "SHFL", "SHFLs")
    if rule.rule == "uses_warp_vote":
        return _uses(rule, found, kernels, where, "warp votes on a predicate (VOTE: "
                     "__ballot_sync, __any_sync, __all_sync)",
                     lambda fs: sum(f.votes for f in fs), "vote", "votes")
    if rule.rule == "uses_shared_memory":
        return _uses(rule, found, kernels, where, "shared memory (LDS/STS/LDSM or a "
                     "__shared__ array)",
                     lambda fs: _count(_merged_ops(fs), SHARED_OPS)
                     + sum(f.shared > 0 for f in fs), "shared-memory use", "shared-memory uses")
    if rule.rule == "uses_constant_memory":
        return _uses(rule, found, kernels, where, "reads of __constant__ data (c[0x3][...])",
                     lambda fs: sum(f.bank3 for f in fs), "c[0x3] read", "c[0x3] reads")
    if rule.rule == "uses_readonly_path":
        return _uses(rule, found, kernels, where, "loads through the read-only path "
                     "(LDG...CONSTANT from const __restrict__ or __ldg, or texture fetches)",
                     lambda fs: sum(f.readonly for f in fs)
                     + _count(_merged_ops(fs), TEXTURE_OPS),
                     "read-only load", "read-only loads")
    if rule.rule == "uses_texture":
        return _uses(rule, found, kernels, where, "texture fetches (TEX/TLD/TLD4)",
                     lambda fs: _count(_merged_ops(fs), TEXTURE_OPS),
                     "texture fetch", "texture fetches")
    if rule.rule == "uses_vector_loads":
        return _uses(rule, found, kernels, where, "16-byte vector loads from global memory "
                     "(LDG.E.128: int4/float4)", lambda fs: sum(f.vector for f in fs),
                     "16-byte load", "16-byte loads")
    if rule.rule == "uses_system_atomics":
        return _uses(rule, found, kernels, where, "system-scope atomics on global memory "
                     "(ATOM/RED .SYS: atomicAdd_system, or atomic_ref with thread_scope_system)",
                     lambda fs: sum(f.system_atomics for f in fs), "system-scope atomic",
                     "system-scope atomics")
    if rule.rule == "uses_memory_fence":
        return _uses(rule, found, kernels, where, "a device-scope memory fence (MEMBAR.GPU or "
                     "MEMBAR.SYS: __threadfence(), __threadfence_system(), or a release "
                     "atomic_ref at device scope)", lambda fs: sum(f.fences for f in fs),
                     "device-scope fence", "device-scope fences")
    if rule.rule == "uses_device_launch":
        return _uses(rule, found, kernels, where, "a device-side kernel launch "
                     "(cudaLaunchDevice)",
                     lambda fs: sum(1 for f in fs for c in f.calls if DEVICE_LAUNCH.search(c)),
                     "device-runtime call", "device-runtime calls")
    if rule.rule == "no_local_memory":
        return _limit(rule, found, kernels, where, "no local memory (no spills: no LDL/STL, "
                      "0 bytes of stack and local)", _local_use)
    if rule.rule == "max_registers":
        return _limit(rule, found, kernels, where,
                      f"at most {rule.value} registers per thread",
                      lambda k, fs: f"{k.registers} registers" if k.registers > rule.value
                      else "")
    raise ValueError(f"unknown rule {rule.rule!r}")  # the manifest refuses these


def _uses(rule, found, kernels, where, what, count, one, many) -> tuple[bool, str, str]:
    """A uses_* rule: met when at least one selected kernel (with its callees) shows it."""
    expected = f"{what} in {where}"
    if not kernels:
        return False, expected, _no_kernel(rule, found)
    hits = [(k, count(closure(k, found))) for k in kernels]
    using = [(k, n) for k, n in hits if n]
    if using:
        return True, expected, "; ".join(
            f"{n} {one if n == 1 else many} in {_short(found.pretty(k.name))}"
            for k, n in using[:4])
    return False, expected, "none" + _instead(rule, kernels, found)


def _instead(rule: Technique, kernels: list[Function], found: Inspection) -> str:
    """What the kernels do instead, when that tells the student something."""
    ops = _merged_ops([f for k in kernels for f in closure(k, found)])
    if rule.rule == "uses_shuffle" and _count(ops, SHARED_OPS):
        return ": the kernel exchanges values through shared memory (LDS/STS)"
    if rule.rule == "uses_warp_vote":
        return _instead_of_votes(ops)
    if rule.rule == "uses_shared_memory" and (ops.get("LDG") or ops.get("STG")):
        return ": the kernel reads and writes global memory only (LDG/STG)"
    if rule.rule == "uses_vector_loads" and ops.get("LDG"):
        return ": every global load is 4 or 8 bytes wide (LDG.E, LDG.E.64)"
    if rule.rule == "uses_memory_fence":
        return _instead_of_fences(kernels, found, ops)
    if rule.rule == "uses_system_atomics" and _count(ops, GLOBAL_ATOMIC_OPS):
        return (": its atomics are device-scope (.GPU), which the host's updates to the same "
                "word race with")
    if rule.rule in ("uses_readonly_path", "uses_texture") and ops.get("LDG"):
        return (": the kernel's global loads are plain LDG (the compiler could not prove the "
                "data read-only: no const __restrict__, no __ldg)"
                if rule.rule == "uses_readonly_path" else
                ": the kernel reads global memory with LDG, not through a texture object")
    return ""


def _instead_of_votes(ops: dict) -> str:
    """Why kernels without a vote on a predicate may still show VOTE, or what they count with."""
    mask_only, atomics = _count(ops, VOTE_OPS), _count(ops, ATOMIC_OPS)
    if mask_only and atomics:
        return (": its VOTEs only read the active mask, which is how nvcc groups a warp's "
                "atomics (ATOMS/ATOMG/RED); none votes on a predicate")
    if mask_only:
        return ": its VOTEs only read the active mask (__activemask()); none votes on a predicate"
    if atomics:
        return ": the kernel counts with atomics (ATOMS/ATOMG/RED), not with votes"
    return ""


def _instead_of_fences(kernels: list[Function], found: Inspection, ops: dict) -> str:
    """What kernels without a device-scope fence have in its place, most telling first."""
    if sum(f.block_fences for k in kernels for f in closure(k, found)):
        return (": its only fences are block-scope (MEMBAR.CTA: __threadfence_block() or a "
                "thread_scope_block atomic), which order nothing for other blocks")
    if ops.get("FENCE"):
        return (": FENCE.VIEW.ASYNC orders a thread's accesses with the async proxy (TMA, "
                "wgmma), not its stores for other blocks")
    atomics = _count(ops, GLOBAL_ATOMIC_OPS)
    if atomics and ops.get("CCTL"):
        return (": the kernel acquires (CCTL.IVALL after an acquire load or atomic) but never "
                "releases: the block that stores a partial needs a fence, or a release, "
                "before its ticket")
    if atomics:
        return (": its atomics (ATOMG/REDG) are relaxed: atomicAdd orders no other store, so "
                "a partial stored before the ticket may not yet be visible to the last block")
    return ""


def _local_use(kernel: Function, functions: list[Function]) -> str:
    spills = _count(_merged_ops(functions), LOCAL_OPS)
    stack = max(f.stack for f in functions)
    local = max(f.local for f in functions)
    parts = [f"{spills} LDL/STL"] if spills else []
    parts += [f"{stack} bytes of stack"] if stack else []
    parts += [f"{local} bytes of local memory"] if local else []
    return ", ".join(parts)


def _limit(rule, found, kernels, where, what, breach) -> tuple[bool, str, str]:
    """A limit every selected kernel must keep (with its callees)."""
    expected = f"{what} in {where}"
    if not kernels:  # a limit no kernel can break is no evidence the student kept it
        return False, expected, _no_kernel(rule, found)
    breaches = [(k, breach(k, closure(k, found))) for k in kernels]
    bad = [f"{_short(found.pretty(k.name))}: {b}" for k, b in breaches if b]
    if bad:
        return False, expected, "; ".join(bad[:4])
    if rule.rule == "max_registers":
        return True, expected, ", ".join(f"{k.registers} in {_short(found.pretty(k.name))}"
                                         for k in kernels[:4])
    return True, expected, "none"


def _no_library_calls(rule: Technique, found: Inspection) -> tuple[bool, str, str]:
    names = rule.value
    expected = f"no call into {', '.join(names)} from your code"
    hits = []
    for lib in names:
        if lib in NAMESPACES:
            ns = NAMESPACES[lib]
            hits += [f"{'kernel' if f.kernel else 'device function'} "
                     f"{_bare(found.pretty(f.name))}"
                     for f in found.functions.values() if in_namespace(f.name, ns)]
            hits += [f"host code {_bare(found.pretty(n))}"
                     for n, _ in found.host if in_namespace(n, ns)]
        else:
            prefix = C_PREFIXES[lib]
            hits += [f"call to {n}" for n, kind in found.host
                     if kind == "U" and n.startswith(prefix)]
    hits = list(dict.fromkeys(hits))
    if not hits:
        return True, expected, "none"
    more = f" and {len(hits) - 4} more" if len(hits) > 4 else ""
    return False, expected, "; ".join(hits[:4]) + more


# The runtime's headers may route a call to a variant of its name: _ptsz/_ptds with the
# per-thread default stream, _vN for a revised signature. The rules name the plain function.
_API_VARIANT = re.compile(r"(_ptsz|_ptds|_v\d+)+$")


def called_api(found: Inspection) -> set[str]:
    """The plain names of the functions the student's host code calls (undefined symbols)."""
    return {_API_VARIANT.sub("", name) for name, kind in found.host if kind == "U"}


def _api_calls(rule: Technique, found: Inspection) -> tuple[bool, str, str]:
    called = called_api(found)
    if rule.rule == "calls_api":
        expected = "calls to " + ", ".join(" or ".join(item.split("|")) for item in rule.value)
        missing = [" or ".join(item.split("|")) for item in rule.value
                   if not any(name in called for name in item.split("|"))]
        if not missing:
            return True, expected, "all of them"
        return False, expected, "no call to " + ", ".join(missing)
    names = [name for item in rule.value for name in item.split("|")]
    expected = "no call to " + ", ".join(names)
    hits = [name for name in names if name in called]
    if not hits:
        return True, expected, "none"
    return False, expected, "; ".join(f"call to {name}" for name in hits)
