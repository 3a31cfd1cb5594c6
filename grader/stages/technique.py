"""The technique stage: checks the manifest's [[technique]] rules on the student's compiled
code, never running it (did the kernel use shuffles, warp votes, shared or constant memory,
stay out of local memory, launch from the device, fence at device scope, leave CUB and cuBLAS
alone).

It inspects only the student's static library (lib<name>_submission.a, meson.build), so course
code can neither satisfy nor break a rule; grader/binary.py reads it. A kernel counts for a
rule only where it runs: launched by the student's launchers (or, when the caller passes the
kernels a test run launched, by that run), or launched from the device by such a kernel. Each
rule is declared once, in RULES, which the manifest's validation reads too. Each rule's verdict
is a case of the stage (passed or failed, with what was expected and what was found) and an
entry of details["rules"]; grader/scoring.py awards the points.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader import tools
from grader.binary import (ATOMIC_OPS, CUDA_MACHINERY, DEVICE_LAUNCH, GLOBAL_ATOMIC_OPS,
                           HEADER_NAMESPACES, LOCAL_OPS, NAMESPACE_LIBRARIES, SHARED_OPS,
                           TEXTURE_OPS, VOTE_OPS, Function, HostCode, Inspection, ToolError,
                           closure, in_namespace, inspect, program_order)
from grader.manifest import Exercise, Technique
from grader.model import CaseResult, CaseStatus, StageName, StageResult, StageStatus
from grader.stages.common import GradeOptions

# Kernels in these namespaces are the libraries', not the student's: the rules about kernels
# never count them.
LIBRARY_NAMESPACES = HEADER_NAMESPACES + ("std",)


def run(options: GradeOptions, ex: Exercise, launched: set[str] | None = None) -> StageResult:
    """The stage's verdicts. `launched`: the mangled names of the kernels a test run launched
    from the host; when given, they (and what they launch from the device) are the kernels
    that count, else the kernels the student's launchers launch in the compiled code. The
    call on what ran reads the library as the call before the run read it (_READINGS), when it
    is still the same file: disassembled once per grade."""
    stage = StageResult(StageName.TECHNIQUE, StageStatus.PASSED)
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
    if nm is None and any(rule.rule in API_RULES for rule in ex.technique):
        # Without the host symbols an avoids_api rule would pass for want of evidence.
        stage.status = StageStatus.ERROR
        stage.message = "nm not found (binutils); rules about API calls not checked"
        return stage
    objdump = tools.find("objdump") if launched is None else None
    if objdump is None and launched is None and \
            any(rule.rule in KERNEL_RULES for rule in ex.technique):
        # Without the host code a kernel nothing launches would count.
        stage.status = StageStatus.ERROR
        stage.message = ("objdump not found (binutils); which kernels your code launches "
                         "was not checked, nor the rules about kernels")
        return stage
    start = time.monotonic()
    found = _READINGS.take(library) if launched is not None else None
    if found is None:
        try:
            found = inspect(library, cuobjdump, nm, tools.find("c++filt"), objdump)
        except ToolError as error:
            stage.status = StageStatus.ERROR
            stage.message = f"{error}; rules not checked"
            return stage
        if launched is None:
            _READINGS.keep(library, found)
    stage.duration_s = round(time.monotonic() - start, 2)
    classify(stage, ex.technique, found, launched)
    return stage


class _Readings:
    """The static pass's reading of each library, for the pass on what ran: taken once, and
    only while the library is the same file (inode, size, modification time). A few dozen at
    most, the oldest dropped first (a grade whose tests never reported leaves its reading)."""
    LIMIT = 64

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[Path, tuple[tuple[int, int, int], Inspection]] = OrderedDict()

    @staticmethod
    def _identity(library: Path) -> tuple[int, int, int] | None:
        try:
            st = library.stat()
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    def keep(self, library: Path, found: Inspection) -> None:
        identity = self._identity(library)
        if identity is None:
            return
        with self._lock:
            self._kept[library.resolve()] = (identity, found)
            self._kept.move_to_end(library.resolve())
            while len(self._kept) > self.LIMIT:
                self._kept.popitem(last=False)

    def take(self, library: Path) -> Inspection | None:
        with self._lock:
            kept = self._kept.pop(library.resolve(), None)
        if kept is None or kept[0] != self._identity(library):
            return None
        return kept[1]


_READINGS = _Readings()


@dataclass(frozen=True)
class Reach:
    """Which kernels count: `kernels` (mangled), or every kernel where nothing says which
    run (None: no host code was read, e.g. captured device code alone); `by_run`: a test run
    named them, rather than the compiled launchers."""
    kernels: frozenset | None = None
    by_run: bool = False

    def counts(self, name: str) -> bool:
        return self.kernels is None or name in self.kernels

    @property
    def launchers(self) -> str:
        return "the tests launched" if self.by_run else "your launchers launch"

    @property
    def never(self) -> str:
        return "which the tests never launched" if self.by_run else "which nothing launches"


def reachability(found: Inspection, launched: set[str] | None = None) -> Reach:
    """The kernels that run: launched from the host (by the test run, given `launched`,
    else by a host function the student's externally visible functions reach, following
    calls through static ones), and the kernels those launch from the device, transitively."""
    kernels = {name for name, f in found.functions.items() if f.kernel}
    if launched is not None:
        start = kernels & set(launched)
    elif found.host_code is None:
        return Reach()
    else:
        start = _host_launched(found.host_code, kernels)
    reached, todo = set(start), list(start)
    while todo:
        for f in closure(found.functions[todo.pop()], found):
            for callee in f.calls:
                if callee in kernels and callee not in reached:
                    reached.add(callee)
                    todo.append(callee)
    return Reach(frozenset(reached), launched is not None)


def _host_launched(code: HostCode, kernels: set[str]) -> set[str]:
    """Kernels whose host function (the one with the kernel's mangled name, which a launch
    calls, inlines or takes the address of) some root reaches. Roots: the externally visible
    functions, the exercise's API, less the kernels' own launch code and nvcc's
    registration, which refer to every kernel."""
    roots = [node for node in code.exported
             if node[0] not in kernels and not CUDA_MACHINERY.search(node[0])]
    seen, todo = set(roots), list(roots)
    while todo:
        for ref in code.refs.get(todo.pop(), ()):
            if ref not in seen:
                seen.add(ref)
                todo.append(ref)
    return {name for name, _ in seen if name in kernels}


def classify(stage: StageResult, rules: tuple[Technique, ...], found: Inspection,
             launched: set[str] | None = None) -> None:
    """Each rule's verdict as a case and a details["rules"] entry; the stage fails with any.
    details["checked_kernels"]: per rule about kernels, the kernels it was checked on."""
    reach = reachability(found, launched)
    verdicts, checked = [], {}
    for rule in rules:
        passed, expected, seen = check(rule, found, reach)
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
        if rule.rule in KERNEL_RULES:
            checked[rule.name] = [found.pretty(k.name) for k in selected_kernels(rule, found)
                                  if reach.counts(k.name)]
    stage.details["rules"] = verdicts
    stage.details["checked_kernels"] = checked
    stage.details["launched_by"] = ("run" if reach.by_run else
                                    "launchers" if reach.kernels is not None else "unknown")
    failed = [c for c in stage.cases if c.status != CaseStatus.PASSED]
    stage.status = StageStatus.FAILED if failed else StageStatus.PASSED
    # The cases say what was expected and found; the stage names the rules that failed.
    stage.message = f"{len(rules) - len(failed)} of {len(rules)} rules met" + (
        f" ({', '.join(c.name for c in failed)} failed)" if failed else "")


# ------------------------------------------------------------------- the rules' kernels

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


def placed_fences(kernel: Function, found: Inspection) -> int:
    """Device-scope fences that stand, in program order, after a global store or atomic
    (the data) and before a global atomic (what publishes it to other blocks)."""
    best = 0
    for order in program_order(kernel, found):
        wrote, placed, pending = False, 0, 0
        for kind in order:
            if kind == "fence" and wrote:
                pending += 1
            elif kind == "atomic":
                placed += pending
                pending = 0
            wrote = wrote or kind in ("store", "atomic")
        best = max(best, placed)
    return best


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


def _names(found: Inspection, kernels: list[Function]) -> str:
    names = ", ".join(_short(found.pretty(k.name)) for k in kernels[:4])
    return names + (f" and {len(kernels) - 4} more" if len(kernels) > 4 else "")


def _which(rule: Technique, found: Inspection, kernels: list[Function]) -> str:
    return f"kernel{'' if len(kernels) == 1 else 's'} {_names(found, kernels)}"


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


def _where(rule: Technique, found: Inspection, reach: Reach, live: list[Function],
           dead: list[Function]) -> str:
    """The kernels a rule is checked on, for "expected ... in <where>": named, and said to be
    the launched ones where others are not."""
    if not dead:
        return _which(rule, found, live)
    launched = f"a kernel {reach.launchers}"
    return f"{launched} ({_names(found, live)})" if live else launched


# ------------------------------------------------------------------ the rules' verdicts

def _seen(kernels: list[Function], found: Inspection) -> tuple[list[Function], dict]:
    """The kernels' code with the device functions it calls, and its opcode counts."""
    functions = [f for k in kernels for f in closure(k, found)]
    return functions, _merged_ops(functions)


def _nothing_instead(kernels: list[Function], found: Inspection) -> str:
    return ""


def _when(ops: tuple[str, ...], text: str):
    """What kernels do instead, said where they have any of `ops`."""
    return lambda kernels, found: text if _count(_seen(kernels, found)[1], ops) else ""


@dataclass(frozen=True)
class _Uses:
    """The verdict of a uses_* rule: met when at least one selected kernel that runs (with
    its callees) shows it. `what` describes it, `count` says how many a kernel has, `one`,
    `many` and `kind` name one, several and any (in "found SHFL only in ..."), and `instead`
    says what kernels without it do in its place, when that tells the student something."""
    what: str
    count: Callable[[Function, Inspection], int]
    one: str
    many: str
    kind: str
    instead: Callable[[list[Function], Inspection], str] = _nothing_instead

    def __call__(self, rule: Technique, found: Inspection, reach: Reach) \
            -> tuple[bool, str, str]:
        kernels = selected_kernels(rule, found)
        if not kernels:
            where = f"kernels matching /{rule.kernel}/" if rule.kernel else "your kernels"
            return False, f"{self.what} in {where}", _no_kernel(rule, found)
        live = [k for k in kernels if reach.counts(k.name)]
        dead = [k for k in kernels if not reach.counts(k.name)]
        expected = f"{self.what} in {_where(rule, found, reach, live, dead)}"
        using = [(k, n) for k, n in ((k, self.count(k, found)) for k in live) if n]
        if using:
            return True, expected, "; ".join(
                f"{n} {self.one if n == 1 else self.many} in {_short(found.pretty(k.name))}"
                for k, n in using[:4])
        unlaunched = [k for k in dead if self.count(k, found)]
        if unlaunched:
            return (False, expected,
                    f"{self.kind} only in {_names(found, unlaunched)}, {reach.never}")
        if not live:
            return False, expected, f"none: {_names(found, dead)}, {reach.never}"
        return False, expected, "none" + self.instead(live, found)


@dataclass(frozen=True)
class _Limit:
    """The verdict of a limit every selected kernel that runs must keep (with its callees):
    `what` it is, how a kernel `breaches` it ("" where it keeps it), and what is found where
    every kernel keeps it."""
    what: Callable[[Technique], str]
    breaches: Callable[[Technique, Function, list[Function]], str]
    kept: Callable[[list[Function], Inspection], str] = lambda live, found: "none"

    def __call__(self, rule: Technique, found: Inspection, reach: Reach) \
            -> tuple[bool, str, str]:
        kernels = selected_kernels(rule, found)
        if not kernels:  # a limit no kernel can break is no evidence the student kept it
            where = f"kernels matching /{rule.kernel}/" if rule.kernel else "your kernels"
            return False, f"{self.what(rule)} in {where}", _no_kernel(rule, found)
        live = [k for k in kernels if reach.counts(k.name)]
        dead = [k for k in kernels if not reach.counts(k.name)]
        expected = f"{self.what(rule)} in {_where(rule, found, reach, live, dead)}"
        if not live:
            return False, expected, f"none: {_names(found, dead)}, {reach.never}"
        breaches = [(k, self.breaches(rule, k, closure(k, found))) for k in live]
        bad = [f"{_short(found.pretty(k.name))}: {b}" for k, b in breaches if b]
        if bad:
            return False, expected, "; ".join(bad[:4])
        return True, expected, self.kept(live, found)


def _in_closure(attribute: str):
    return lambda k, found: sum(getattr(f, attribute) for f in closure(k, found))


def _instead_of_shuffles(kernels: list[Function], found: Inspection) -> str:
    functions, ops = _seen(kernels, found)
    if _count(ops, SHARED_OPS):
        return ": the kernel exchanges values through shared memory (LDS/STS)"
    if sum(f.atomic_broadcasts for f in functions):
        return (": its only SHFLs (SHFL.IDX) hand an atomic's result to the warp's other "
                "lanes, which nvcc emits when it groups a warp's atomics into one (and for "
                "grid.sync()); none exchanges values of yours")
    return ""


def _instead_of_votes(kernels: list[Function], found: Inspection) -> str:
    """Why kernels without a vote on a predicate may still show VOTE, or what they count with."""
    ops = _seen(kernels, found)[1]
    mask_only, atomics = _count(ops, VOTE_OPS), _count(ops, ATOMIC_OPS)
    if mask_only and atomics:
        return (": its VOTEs only read the active mask, which is how nvcc groups a warp's "
                "atomics (ATOMS/ATOMG/RED); none votes on a predicate")
    if mask_only:
        return ": its VOTEs only read the active mask (__activemask()); none votes on a predicate"
    if atomics:
        return ": the kernel counts with atomics (ATOMS/ATOMG/RED), not with votes"
    return ""


def _instead_of_fences(kernels: list[Function], found: Inspection) -> str:
    """What kernels without a well-placed device-scope fence have in its place, most telling
    first."""
    ops = _seen(kernels, found)[1]
    orders = [order for k in kernels for order in program_order(k, found)]
    if any("fence" in order for order in orders):
        return _misplaced_fence(orders)
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


def _instead_of_async_copies(kernels: list[Function], found: Inspection) -> str:
    """How kernels without an asynchronous copy fill their shared memory, if they do."""
    ops = _seen(kernels, found)[1]
    if _count(ops, ("STS", "STSM")) and ops.get("LDG"):
        return (": the kernel stages its tiles through registers (LDG, then STS), which holds "
                "each thread until the load lands")
    if _count(ops, ("STS", "STSM")):
        return ": the kernel fills shared memory with plain stores (STS)"
    if not _count(ops, SHARED_OPS):
        return ": the kernel does not use shared memory"
    return ""


# The wait half of a cluster barrier (cluster.sync(), barrier.cluster.wait): UCGABAR_WAIT.
CLUSTER_BARRIER_OPS = ("UCGABAR_WAIT",)


def guarded_cluster_accesses(kernel: Function, found: Inspection) -> int:
    """Accesses to other blocks' shared memory that stand, in program order, between two
    waits at a cluster barrier: one before (the owner's shared memory is ready and its block
    running) and one after (no block exits, or reads its slice, while another may still be
    using it)."""
    best = 0
    for order in program_order(kernel, found):
        waits = [i for i, kind in enumerate(order) if kind == "cluster_wait"]
        if waits:
            best = max(best, sum(1 for i, kind in enumerate(order)
                                 if kind == "cluster_access" and waits[0] < i < waits[-1]))
    return best


def _unguarded_cluster_access(orders: list[list[str]], accesses: int) -> str:
    """Where a kernel's accesses to other blocks' shared memory stand against its cluster
    barriers, when none stands between two of them."""
    some = f"its {accesses} access{'' if accesses == 1 else 'es'} to other blocks' shared memory"
    come = "comes" if accesses == 1 else "come"
    waits = [i for order in orders for i, kind in enumerate(order) if kind == "cluster_wait"]
    if not waits:
        return (f": {some} {come} with no cluster barrier (UCGABAR_WAIT: cluster.sync()), so "
                "nothing makes the owner's slice ready before the first update, nor keeps the "
                "owner from reading its slice and exiting before the last")
    if not any(kind == "cluster_access" and any(k == "cluster_wait" for k in order[:i])
               for order in orders for i, kind in enumerate(order)):
        return (f": {some} {come} before any cluster barrier, so the owner's slice may not be "
                "zeroed yet, nor its block running; cluster.sync() belongs between zeroing the "
                "slices and the first update")
    return (f": no cluster barrier follows {some}, so a block may read its slice and exit "
            "while another is still adding to it; cluster.sync() belongs after the last "
            "update, before the slices are read")


def _instead_of_distributed_shared_memory(kernels: list[Function], found: Inspection) -> str:
    """What kernels without a synchronised access to another block's shared memory do."""
    functions, ops = _seen(kernels, found)
    accesses = sum(f.cluster_accesses for f in functions)
    if accesses:
        orders = [order for k in kernels for order in program_order(k, found)]
        return _unguarded_cluster_access(orders, accesses)
    if _count(ops, CLUSTER_BARRIER_OPS):
        return (": the kernel synchronises its cluster (cluster.sync()) but each block "
                "touches only its own shared memory; no address is mapped to another block "
                "(cluster.map_shared_rank)")
    if _count(ops, SHARED_OPS):
        return (": each block counts in its own shared memory only (LDS/STS/ATOMS), with no "
                "address mapped to another block of a cluster (cluster.map_shared_rank)")
    if _count(ops, GLOBAL_ATOMIC_OPS):
        return ": the kernel counts with global atomics (ATOMG/REDG), not in shared memory"
    return ""


def _misplaced_fence(orders: list[list[str]]) -> str:
    """Where a device-scope fence stands when none lies between a store and a later atomic."""
    def after(order, i, kinds):
        return any(kind in kinds for kind in order[i + 1:])

    fences = [(order, i) for order in orders for i, kind in enumerate(order) if kind == "fence"]
    if not any(after(order, i, ("atomic",)) for order, i in fences):
        return (": its device-scope fence comes after its last global atomic, so the atomic "
                "that publishes the data (the ticket) may reach other blocks before the data "
                "does; the fence belongs between the data's store and that atomic")
    return (": its device-scope fence comes before any global store, so it orders no data "
            "before the atomic that publishes it; the fence belongs between the data's store "
            "and that atomic")


# The wait on the grid dependency of a programmatic launch (cudaGridDependencySynchronize(),
# griddepcontrol.wait): ACQBULK on sm_90. Its trigger (cudaTriggerProgrammaticLaunchCompletion(),
# griddepcontrol.launch_dependents) is PREEXIT.
GRID_DEPENDENCY_WAIT_OPS = ("ACQBULK",)
GRID_DEPENDENCY_TRIGGER_OPS = ("PREEXIT",)


def _instead_of_grid_waits(kernels: list[Function], found: Inspection) -> str:
    """What kernels that never wait on their grid dependency do about it, if anything."""
    if _count(_seen(kernels, found)[1], GRID_DEPENDENCY_TRIGGER_OPS):
        return (": the kernel lets the next one start (PREEXIT: "
                "cudaTriggerProgrammaticLaunchCompletion()) but never waits for the one before, "
                "so when it is launched programmatically it may read data the previous kernel "
                "has not finished writing")
    return ""


def _local_use(rule: Technique, kernel: Function, functions: list[Function]) -> str:
    spills = _count(_merged_ops(functions), LOCAL_OPS)
    stack = max(f.stack for f in functions)
    local = max(f.local for f in functions)
    parts = [f"{spills} LDL/STL"] if spills else []
    parts += [f"{stack} bytes of stack"] if stack else []
    parts += [f"{local} bytes of local memory"] if local else []
    return ", ".join(parts)


def _too_many_registers(rule: Technique, kernel: Function, functions: list[Function]) -> str:
    return f"{kernel.registers} registers" if kernel.registers > rule.value else ""


def _no_library_calls(rule: Technique, found: Inspection, reach: Reach | None = None) \
        -> tuple[bool, str, str]:
    names = rule.value
    expected = f"no call into {', '.join(names)} from your code"
    hits = []
    for lib in names:
        if lib in NAMESPACE_LIBRARIES:
            hits += [f"{'kernel' if f.kernel else 'device function'} "
                     f"{_bare(found.pretty(f.name))}"
                     for f in found.functions.values() if in_namespace(f.name, lib)]
            hits += [f"host code {_bare(found.pretty(n))}"
                     for n, _ in found.host if in_namespace(n, lib)]
        else:  # a C library: its functions' names start with the library's
            hits += [f"call to {n}" for n, kind in found.host
                     if kind == "U" and n.startswith(lib)]
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


def _calls_api(rule: Technique, found: Inspection, reach: Reach | None = None) \
        -> tuple[bool, str, str]:
    called = called_api(found)
    expected = "calls to " + ", ".join(" or ".join(item.split("|")) for item in rule.value)
    missing = [" or ".join(item.split("|")) for item in rule.value
               if not any(name in called for name in item.split("|"))]
    if not missing:
        return True, expected, "all of them"
    return False, expected, "no call to " + ", ".join(missing)


def _avoids_api(rule: Technique, found: Inspection, reach: Reach | None = None) \
        -> tuple[bool, str, str]:
    called = called_api(found)
    names = [name for item in rule.value for name in item.split("|")]
    expected = "no call to " + ", ".join(names)
    hits = [name for name in names if name in called]
    if not hits:
        return True, expected, "none"
    return False, expected, "; ".join(f"call to {name}" for name in hits)


# ------------------------------------------------------------------------- the registry

@dataclass(frozen=True)
class Rule:
    """A rule a [[technique]] entry may name, declared once: the manifest accepts exactly
    these names. `checks` says when it is met; `verdict` gives (passed, what was expected,
    what was found) from the library read and the kernels that run; `about_kernels`: which
    kernels run matters and the entry's `kernel` selects them (else the rule reads the whole
    object); `value` is what the entry's value holds: "" nothing, "registers" a count,
    "libraries" names of binary.FORBIDDABLE_LIBRARIES, "api" function names ("a|b": either)."""
    name: str
    checks: str
    verdict: Callable[[Technique, Inspection, Reach | None], tuple[bool, str, str]]
    about_kernels: bool = True
    value: str = ""


RULES: dict[str, Rule] = {rule.name: rule for rule in (
    Rule("uses_constant_memory", "some kernel that runs reads __constant__ data (c[0x3])",
         _Uses("reads of __constant__ data (c[0x3][...])", _in_closure("bank3"),
               "c[0x3] read", "c[0x3] reads", "reads of __constant__ data")),
    Rule("uses_shared_memory", "some kernel that runs uses shared memory",
         _Uses("shared memory (LDS/STS/LDSM or a __shared__ array)",
               lambda k, found: _count(_merged_ops(closure(k, found)), SHARED_OPS)
               + sum(f.shared > 0 for f in closure(k, found)),
               "shared-memory use", "shared-memory uses", "shared memory",
               _when(("LDG", "STG"), ": the kernel reads and writes global memory only "
                                     "(LDG/STG)"))),
    Rule("uses_shuffle", "some kernel that runs exchanges values with warp shuffles",
         _Uses("warp shuffles (SHFL)", _in_closure("shuffles"), "SHFL", "SHFLs", "SHFL",
               _instead_of_shuffles)),
    Rule("uses_warp_vote", "some kernel that runs votes on a predicate",
         _Uses("warp votes on a predicate (VOTE: __ballot_sync, __any_sync, __all_sync)",
               _in_closure("votes"), "vote", "votes", "votes on a predicate",
               _instead_of_votes)),
    Rule("uses_readonly_path", "some kernel that runs loads through the read-only path",
         _Uses("loads through the read-only path (LDG...CONSTANT from const __restrict__ or "
               "__ldg, or texture fetches)",
               lambda k, found: sum(f.readonly for f in closure(k, found))
               + _count(_merged_ops(closure(k, found)), TEXTURE_OPS),
               "read-only load", "read-only loads", "read-only loads",
               _when(("LDG",), ": the kernel's global loads are plain LDG (the compiler could "
                               "not prove the data read-only: no const __restrict__, no "
                               "__ldg)"))),
    Rule("uses_texture", "some kernel that runs fetches through a texture object",
         _Uses("texture fetches (TEX/TLD/TLD4)",
               lambda k, found: _count(_merged_ops(closure(k, found)), TEXTURE_OPS),
               "texture fetch", "texture fetches", "texture fetches",
               _when(("LDG",), ": the kernel reads global memory with LDG, not through a "
                               "texture object"))),
    Rule("uses_vector_loads", "some kernel that runs loads 16 bytes at once from global memory",
         _Uses("16-byte vector loads from global memory (LDG.E.128: int4/float4)",
               _in_closure("vector"), "16-byte load", "16-byte loads", "16-byte loads",
               _when(("LDG",), ": every global load is 4 or 8 bytes wide (LDG.E, "
                               "LDG.E.64)"))),
    Rule("uses_async_copy", "some kernel that runs copies global memory into shared memory "
                            "asynchronously",
         _Uses("asynchronous global-to-shared copies (LDGSTS: cp.async, cuda::memcpy_async, "
               "__pipeline_memcpy_async; or Hopper's bulk and tensor copies, UBLKCP/UTMALDG)",
               _in_closure("async_copies"), "asynchronous copy", "asynchronous copies",
               "asynchronous copies", _instead_of_async_copies)),
    Rule("uses_distributed_shared_memory", "some kernel that runs accesses another block's "
                                           "shared memory in its cluster, between cluster "
                                           "barriers",
         _Uses("accesses to other blocks' shared memory through cluster.map_shared_rank "
               "(PRMT ..., 0x654 or MAPA, then a generic LD/ST/ATOM/RED) with a cluster "
               "barrier (UCGABAR_WAIT: cluster.sync()) before and after them",
               guarded_cluster_accesses,
               "access to distributed shared memory", "accesses to distributed shared memory",
               "accesses to distributed shared memory", _instead_of_distributed_shared_memory)),
    Rule("no_local_memory", "no kernel that runs spills or keeps arrays in local memory",
         _Limit(lambda rule: "no local memory (no spills: no LDL/STL, 0 bytes of stack and "
                             "local)", _local_use)),
    Rule("max_registers", "every kernel that runs uses at most `value` registers per thread",
         _Limit(lambda rule: f"at most {rule.value} registers per thread", _too_many_registers,
                lambda live, found: ", ".join(f"{k.registers} in {_short(found.pretty(k.name))}"
                                              for k in live[:4])),
         value="registers"),
    Rule("uses_device_launch", "some kernel that runs launches kernels from the device",
         _Uses("a device-side kernel launch (cudaLaunchDevice)",
               lambda k, found: sum(1 for f in closure(k, found) for c in f.calls
                                    if DEVICE_LAUNCH.search(c)),
               "device-runtime call", "device-runtime calls", "device-side launches")),
    Rule("uses_memory_fence", "some kernel that runs fences at device scope between the "
                              "data's store and the atomic that publishes it",
         _Uses("a device-scope memory fence (MEMBAR.GPU or MEMBAR.SYS: __threadfence(), "
               "__threadfence_system(), or a release atomic_ref at device scope) between the "
               "global store of the data and the global atomic that publishes it",
               placed_fences, "device-scope fence", "device-scope fences",
               "a device-scope fence between a store and a later atomic", _instead_of_fences)),
    Rule("uses_system_atomics", "some kernel that runs has a system-scope atomic on global "
                                "memory",
         _Uses("system-scope atomics on global memory (ATOM/RED .SYS: atomicAdd_system, or "
               "atomic_ref with thread_scope_system)", _in_closure("system_atomics"),
               "system-scope atomic", "system-scope atomics", "system-scope atomics",
               _when(GLOBAL_ATOMIC_OPS, ": its atomics are device-scope (.GPU), which the "
                                        "host's updates to the same word race with"))),
    Rule("waits_on_grid_dependency", "some kernel that runs waits for the kernel its "
                                     "programmatic launch depends on",
         _Uses("a wait on the grid dependency (ACQBULK: cudaGridDependencySynchronize() or "
               "griddepcontrol.wait)",
               lambda k, found: _count(_merged_ops(closure(k, found)),
                                       GRID_DEPENDENCY_WAIT_OPS),
               "grid-dependency wait", "grid-dependency waits", "grid-dependency waits",
               _instead_of_grid_waits)),
    Rule("no_library_calls", "no code of the object lies in or calls a library `value` names",
         _no_library_calls, about_kernels=False, value="libraries"),
    Rule("calls_api", "the host code calls every function `value` lists",
         _calls_api, about_kernels=False, value="api"),
    Rule("avoids_api", "the host code calls none of the functions `value` lists",
         _avoids_api, about_kernels=False, value="api"),
)}
# Rules for which it matters which kernels run, and rules that read the host's calls (nm).
KERNEL_RULES = tuple(name for name, rule in RULES.items() if rule.about_kernels)
API_RULES = tuple(name for name, rule in RULES.items() if rule.value == "api")


def check(rule: Technique, found: Inspection, reach: Reach | None = None) \
        -> tuple[bool, str, str]:
    """(passed, what was expected, what was found) for one rule; `reach` says which kernels
    run (by default what the host code read shows)."""
    declared = RULES.get(rule.rule)
    if declared is None:
        raise ValueError(f"unknown rule {rule.rule!r}")  # the manifest refuses these
    if declared.about_kernels and reach is None:
        reach = reachability(found)
    return declared.verdict(rule, found, reach)
