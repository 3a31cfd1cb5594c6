"""The technique stage: reads the student's compiled code, never runs it, and checks the
manifest's [[technique]] rules (did the kernel use shuffles, warp votes, shared or constant
memory, stay out of local memory, launch from the device, fence at device scope, leave
CUB and cuBLAS alone).

It inspects only the student's static library (lib<name>_submission.a, meson.build), so course
code can neither satisfy nor break a rule. Device code is read with the toolkit's cuobjdump
(-symbols: which functions are kernels; -sass: instructions; -res-usage: registers, stack,
local and shared bytes; -elf: relocations, i.e. what a function calls), host symbols with nm,
host code with objdump (which host function refers to which: what the launchers launch).
A kernel counts for a rule only where it runs: launched by the student's launchers (or, when
the caller passes the kernels a test run launched, by that run), or launched from the device by
such a kernel. Each rule's verdict is a case of the stage (passed or failed, with what was
expected and what was found) and an entry of details["rules"]; grader/scoring.py awards the
points.
"""

from __future__ import annotations

import re
import subprocess
import time
from bisect import bisect_right
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

# An instruction guarded by the constant false predicate never runs: ptxas pads fences and
# cp.async waits with "@!PT LDS RZ, [RZ]" (four before every __threadfence() with -rdc), which
# must not count as shared memory, nor anything else.
NEVER_RUNS = ("@!PT", "@!UPT")
SHARED_OPS = ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDGSTS")
LOCAL_OPS = ("LDL", "STL")
# Warp votes (VOTEU: the uniform datapath's form) and atomics, for uses_warp_vote. A vote on the
# constant predicate PT only reads the active mask: __activemask(), and what nvcc emits to
# group a warp's atomics into one (VOTEU.ANY URn, UPT, PT, then POPC or REDUX and one atomic
# by the first lane), and grid.sync(); so those are not counted as votes.
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
# Atomics on global (or generic) addresses: what publishes data to other blocks, for
# uses_memory_fence; with the plain global (or generic) stores, what writes the data.
GLOBAL_ATOMIC_OPS = tuple(op for op in ATOMIC_OPS if op != "ATOMS")
GLOBAL_STORE_OPS = ("STG", "ST")
# Instructions whose first register operand is read, not written (for the register writes
# parse_sass follows); stores and reductions name an address first.
_READS_FIRST = ("WARPSYNC", "RET", "BRX", "JMX", "CALL", "BSSY", "BSYNC", "RED", "REDG")
# The ones that may print a predicate output before their destination register
# (SHFL.IDX PT, R9, R3, R0, 0x1f; ATOMG.E.ADD PT, R3, desc[UR4][R2.64], R11).
_PREDICATE_FIRST = ("SHFL", "ATOM", "ATOMG")
_PREDICATE = re.compile(r"^!?U?P[T0-9]$")

_SASS_FUNCTION = re.compile(r"^\s*Function\s*:\s*(\S+)")
_SASS_INSTRUCTION = re.compile(
    r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?\s*"
    r"([^;]*);")
_REGISTER = re.compile(r"^R(\d+)$")
_RES_FUNCTION = re.compile(r"^\s*Function\s+(\S+?):\s*$")
_RES_FIELD = re.compile(r"([A-Z]+(?:\[\d+\])?):(\d+)")
# A kernel's line in -symbols: "FUNC WEAK DEFAULT ENTRY <name>" from the cuobjdump wheel,
# "STT_FUNC STB_GLOBAL STO_ENTRY <name>" from the toolkit's cuobjdump of the same release.
_ENTRY = re.compile(r"^(?:STT_)?FUNC\s+(?:\S+\s+)*?(?:STO_)?ENTRY\s+(\S+)\s*$")
_RELA = re.compile(r"^\.section\s+\.rela\.text\.(\S+)")
NM_LINE = re.compile(r"^(\S+)\s+([A-Za-z?])(?:\s|$)")

# objdump's host-code output: archive members, symbol table lines (value, seven flag
# characters, section, size, name), disassembled functions, instructions, their relocations
# (inline after -d -r), relocation records of the other sections (-r alone).
_OBJ_MEMBER = re.compile(r"^(.+?):\s+file format \S+\s*$")
_OBJ_SYMBOL = re.compile(r"^([0-9a-f]{8,16}) (.{7}) (\S+)\s+([0-9a-f]{8,16})\s+(.*)$")
_OBJ_SECTION = re.compile(r"^Disassembly of section (\S+):\s*$")
_OBJ_FUNCTION = re.compile(r"^([0-9a-f]+) <(.+)>:\s*$")
_OBJ_RELOCATION = re.compile(r"^\s*([0-9a-f]+):\s+(R_[A-Z0-9_]+)\s+(\S+)\s*$")
_OBJ_INSTRUCTION = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
_OBJ_TARGET = re.compile(r"<([^<>+]+?)(?:[+-]0x[0-9a-f]+)?>")
_OBJ_RECORDS = re.compile(r"^RELOCATION RECORDS FOR \[(\S+)\]:\s*$")
_OBJ_RECORD = re.compile(r"^([0-9a-f]+)\s+(R_[A-Z0-9_]+)\s+(\S+)\s*$")
_ADDEND = re.compile(r"^(.+?)(?:([+-])0x([0-9a-f]+))?$")
# The compiler's cold halves of a function (exception paths) belong to it.
_COLD = re.compile(r"\.cold(?:\.\d+)?$")
# Host code nvcc generates for every kernel, and which refers to every kernel (registration at
# load time) or is a kernel's own launch code: never a root of what the launchers launch.
CUDA_MACHINERY = re.compile(
    r"__device_stub__|__nv_cudaEntityRegisterCallback|__sti____cudaRegisterAll|"
    r"__cudaRegisterLinkedBinary|__cudaUnregisterBinaryUtil|____nv_dummy_param_ref|"
    r"__nv_save_fatbinhandle_for_managed_rt|__nv_init_managed_rt")


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
    shuffles: int = 0               # SHFLs, less those that broadcast an atomic's result
    atomic_broadcasts: int = 0      # SHFL.IDX of a register an atomic just wrote
    system_atomics: int = 0         # global atomics at system scope (ATOM/ATOMG/RED/REDG .SYS)
    registers: int = 0
    stack: int = 0
    local: int = 0
    shared: int = 0
    calls: set = field(default_factory=set)        # symbols its relocations name
    call_at: dict = field(default_factory=dict)    # relocation offset -> symbol (CALL.ABS)
    # Per copy of the function in -sass: (address, kind, target) in address order, kind one
    # of store, atomic, fence (device scope), call_rel (target: an address in the same code),
    # call_abs (the callee is named by the relocation at the address).
    memory: list = field(default_factory=list)


@dataclass
class HostCode:
    """Which host symbol refers to which, from objdump: a node is (name, "") for a symbol
    visible across objects, (name, member) for one local to an archive member."""
    refs: dict = field(default_factory=dict)       # node -> nodes its code or data names
    exported: set = field(default_factory=set)     # defined, externally visible functions


@dataclass
class Inspection:
    functions: dict = field(default_factory=dict)  # mangled name -> Function
    host: list = field(default_factory=list)       # (mangled name, nm type)
    demangled: dict = field(default_factory=dict)  # mangled -> demangled
    host_code: HostCode | None = None              # None: not read (every kernel counts)

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


def _written_registers(op: str, modifiers: str, operands: list[str]) -> list[str]:
    """The general registers an instruction writes, as far as the atomic-broadcast check
    needs them: its destination (after the predicate output of SHFL and ATOM), two or four
    consecutive registers for the 64- and 128-bit forms."""
    if op.startswith("ST") or op in _READS_FIRST:
        return []
    position = 1 if op in _PREDICATE_FIRST and operands and _PREDICATE.match(operands[0]) \
        else 0
    m = _REGISTER.match(operands[position]) if len(operands) > position else None
    if m is None:
        return []
    width = 4 if ".128" in modifiers else 2 if (".64" in modifiers or ".WIDE" in modifiers) \
        else 1
    return [f"R{int(m.group(1)) + i}" for i in range(width)]


def parse_sass(text: str, into: Inspection) -> None:
    """cuobjdump -sass: opcode counts, constant-bank-3 reads, read-only and vector loads,
    votes on a predicate, shuffles of the student's, and the order of stores, atomics, fences
    and calls per function. Instructions that never run (@!PT) are skipped."""
    current, memory, writer = None, [], {}
    for line in text.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m:
            current, memory, writer = into.function(m.group(1)), [], {}
            current.memory.append(memory)
            continue
        m = _SASS_INSTRUCTION.match(line)
        if not m or current is None:
            continue
        address, guard, op = int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3)
        modifiers, operands = m.group(4) or "", m.group(5)
        if guard in NEVER_RUNS:
            continue
        parts = modifiers.split(".")
        arguments = [a.strip() for a in operands.split(",")] if operands.strip() else []
        current.ops[op] = current.ops.get(op, 0) + 1
        if "c[0x3][" in operands:
            current.bank3 += 1
        if op == "LDG" and ".CONSTANT" in modifiers:
            current.readonly += 1
        if op == "LDG" and re.search(r"\.(128|256)\b", modifiers):
            current.vector += 1
        if op in GLOBAL_ATOMIC_OPS and "SYS" in parts:
            current.system_atomics += 1
        if op == "MEMBAR":
            if set(parts) & DEVICE_FENCE_SCOPES:
                current.fences += 1
                memory.append((address, "fence", None))
            elif "CTA" in parts:
                current.block_fences += 1
        # The voted predicate is the last operand: VOTE.ANY R0, PT, P1 (a ballot),
        # VOTE.ALL P0, P1; VOTE.ANY R0, PT, PT is __activemask().
        if op in VOTE_OPS and arguments and arguments[-1] not in CONSTANT_PREDICATES:
            current.votes += 1
        # nvcc groups a warp's atomics on one address into one atomic by the first lane and,
        # when the old value is used, hands it to the others: SHFL.IDX PT, Rd, Rold, Rlane.
        # grid.sync() compiles to the same. Such a shuffle is the compiler's, not a warp
        # exchange of the student's.
        if op == "SHFL":
            if "IDX" in parts and len(arguments) > 2 and writer.get(arguments[2]) in ATOMIC_OPS:
                current.atomic_broadcasts += 1
            else:
                current.shuffles += 1
        if op in GLOBAL_STORE_OPS:
            memory.append((address, "store", None))
        elif op in GLOBAL_ATOMIC_OPS:
            memory.append((address, "atomic", None))
        elif op == "CALL" and "REL" in parts and arguments:
            try:
                memory.append((address, "call_rel", int(arguments[0].split()[0], 16)))
            except ValueError:
                pass
        elif op == "CALL":
            memory.append((address, "call_abs", None))
        for register in _written_registers(op, modifiers, arguments):
            writer[register] = op


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
    __constant__ variables, the device runtime's launch entry points, kernels launched from
    the device), and at which offset (a CALL.ABS's callee is the symbol at its address)."""
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
            current.call_at[int(parts[0], 16)] = parts[1]


def parse_nm(text: str, into: Inspection) -> None:
    """nm -P: 'NAME TYPE [VALUE SIZE]' per symbol; member headers ('lib.a[x.o]:') skipped."""
    for line in text.splitlines():
        if not line or line.endswith(":"):
            continue
        m = NM_LINE.match(line)
        if m:
            into.host.append((m.group(1), m.group(2)))


@dataclass
class _Member:
    """One archive member's symbols, to name what its relocations point at."""
    name: str
    local: set = field(default_factory=set)        # names bound locally in the member
    sections: dict = field(default_factory=dict)   # section -> [(start, end, name)]
    ordered: bool = True                           # each section's list sorted by start

    def add(self, section: str, start: int, end: int, name: str) -> None:
        self.sections.setdefault(section, []).append((start, end, name))
        self.ordered = False

    def node(self, name: str) -> tuple[str, str]:
        name = _COLD.sub("", name)
        return (name, self.name) if name in self.local else (name, "")

    def containing(self, section: str, offset: int) -> str | None:
        if not self.ordered:
            for listed in self.sections.values():
                listed.sort()
            self.ordered = True
        symbols = self.sections.get(section, [])
        i = bisect_right(symbols, (offset, float("inf"), "")) - 1
        if i >= 0 and symbols[i][0] <= offset < max(symbols[i][1], symbols[i][0] + 1):
            return symbols[i][2]
        return None


def _target(member: _Member, symbol: str, kind: str) -> tuple[str, str] | None:
    """The node a relocation points at: a symbol, or a section plus an offset (how the
    assembler names a static function or a local table), resolved to the function or object
    there. A PC-relative field is patched 4 bytes before the next instruction, so its
    addend is the offset less 4."""
    m = _ADDEND.match(symbol)
    name, sign, addend = m.group(1), m.group(2), int(m.group(3) or "0", 16)
    if name not in member.sections:
        return member.node(name)
    offset = -addend if sign == "-" else addend
    if "PC" in kind or "PLT" in kind:
        offset += 4
    found = member.containing(name, offset)
    return member.node(found) if found else None


def parse_host_code(disassembly: str, records: str, into: Inspection) -> None:
    """objdump -d -r -t (code with its relocations, symbol tables) and objdump -r (the
    relocations of the data sections: tables of function pointers, vtables): which host symbol
    refers to which, and which functions other objects can call."""
    code = HostCode()
    members: dict[str, _Member] = {}
    member = _Member("")
    function = None
    pending = None   # the target objdump printed for the last instruction, unless relocated

    def refer(target):
        if function is not None and target is not None and target != function:
            code.refs.setdefault(function, set()).add(target)

    aliases: dict[tuple, list[str]] = {}
    for line in disassembly.splitlines():
        m = _OBJ_RELOCATION.match(line)
        if m:
            pending = None  # the printed target of a relocated instruction is a placeholder
            refer(_target(member, m.group(3), m.group(2)))
            continue
        m = _OBJ_INSTRUCTION.match(line)
        if m and function is not None:
            refer(pending)
            target = _OBJ_TARGET.findall(m.group(2))
            pending = member.node(target[-1]) if target else None
            continue
        refer(pending)
        pending = None
        m = _OBJ_FUNCTION.match(line)
        if m:
            function = member.node(m.group(2))
            continue
        m = _OBJ_MEMBER.match(line)
        if m:
            member = members.setdefault(m.group(1), _Member(m.group(1)))
            function = None
            continue
        if _OBJ_SECTION.match(line):
            function = None
            continue
        m = _OBJ_SYMBOL.match(line)
        if m:
            value, flags, section, size = int(m.group(1), 16), m.group(2), m.group(3), \
                int(m.group(4), 16)
            name = m.group(5).split()[-1] if m.group(5).strip() else ""
            if not name or section.startswith("*"):
                continue  # undefined, absolute or common: nothing here to refer to
            if flags[5] == "d" or name == section:
                member.sections.setdefault(section, [])
                continue
            if flags[0] == "l":
                member.local.add(name)
            if flags[6] in "FO":
                member.add(section, value, value + size, name)
                aliases.setdefault((member.name, section, value), []).append(name)
            if flags[6] == "F" and (flags[0] in "gu!" or flags[1] == "w"):
                code.exported.add((name, ""))
    refer(pending)
    # objdump heads a function with one of the names at its address; the others (a
    # constructor's C1/C2 forms) must lead to the same code.
    for (member_name, _, _), names in aliases.items():
        owner = members[member_name]
        nodes = {owner.node(n) for n in names}
        for node in nodes:
            code.refs.setdefault(node, set()).update(nodes - {node})
    _parse_data_relocations(records, members, code)
    into.host_code = code


def _parse_data_relocations(records: str, members: dict[str, _Member], code: HostCode) -> None:
    """objdump -r: a relocation in a data section belongs to the object that holds its
    offset (a table of kernel pointers, a vtable); code sections came with the disassembly."""
    member, section = _Member(""), ""
    for line in records.splitlines():
        m = _OBJ_MEMBER.match(line)
        if m:
            member = members.get(m.group(1), _Member(m.group(1)))
            continue
        m = _OBJ_RECORDS.match(line)
        if m:
            section = m.group(1)
            continue
        m = _OBJ_RECORD.match(line)
        if not m or section.startswith((".text", ".debug", ".eh_frame")):
            continue
        owner = member.containing(section, int(m.group(1), 16))
        target = _target(member, m.group(3), m.group(2))
        if owner is not None and target is not None:
            code.refs.setdefault(member.node(owner), set()).add(target)


def in_namespace(mangled: str, namespace: str) -> bool:
    """A mangled name declared in namespace (functions, statics local to them, vtables and
    typeinfo); the host stub of a kernel (__device_stub_...) included."""
    mangled = mangled.removeprefix("__device_stub_")
    return re.match(rf"_Z(?:T[VIS])?Z?N[rVKRO]*{len(namespace)}{namespace}(?:\d|[A-Z])",
                    mangled) is not None


# ------------------------------------------------------------------------------ running

class ToolError(Exception):
    """A tool could not read the object: the stage is in error, not the student's code."""


def _tool(args: list[str], whole: bool = False) -> str:
    """The tool's output; `whole`: an output cut short is an error (a host graph missing its
    middle would call launched kernels dead)."""
    result = proc.run(args, TOOL_TIMEOUT_S, output_limit=OUTPUT_LIMIT)
    if result.returncode != 0:
        text = result.output.strip()
        if "does not contain device code" in text or "no device code" in text.lower():
            return ""
        last = next((l for l in reversed(text.splitlines()) if l.strip()), "")
        raise ToolError(f"{Path(args[0]).name} {args[1]} failed ({result.describe_exit()}): "
                        f"{last.strip()[:300]}")
    if whole and result.truncated:
        raise ToolError(f"{Path(args[0]).name} {args[1]} printed more than "
                        f"{OUTPUT_LIMIT // (1024 * 1024)} MiB")
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


def inspect(library: Path, cuobjdump: str, nm: str | None, cxxfilt: str | None,
            objdump: str | None = None) -> Inspection:
    """Everything the rules read from the library; without objdump, no host code (every
    kernel then counts as launched)."""
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
    if objdump:
        parse_host_code(_tool([objdump, "-d", "-r", "-t", "--no-show-raw-insn", lib],
                              whole=True),
                        _tool([objdump, "-r", lib], whole=True), found)
    # Only for messages and kernel regexes; mangled names serve when it fails.
    found.demangled = demangle(sorted(set(found.functions) | {n for n, _ in found.host}),
                               cxxfilt)
    return found


# Rules about the kernels, for which it matters which kernels run.
KERNEL_RULES = ("uses_shuffle", "uses_warp_vote", "uses_shared_memory", "uses_constant_memory",
                "uses_readonly_path", "uses_texture", "uses_vector_loads",
                "uses_system_atomics", "uses_memory_fence", "uses_device_launch",
                "no_local_memory", "max_registers")


def run(options: GradeOptions, ex: Exercise, launched: set[str] | None = None) -> StageResult:
    """The stage's verdicts. `launched`: the mangled names of the kernels a test run launched
    from the host; when given, they (and what they launch from the device) are the kernels
    that count, else the kernels the student's launchers launch in the compiled code. Reads
    the library afresh and keeps nothing, so it may be called again with the run's set."""
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
    objdump = tools.find("objdump") if launched is None else None
    if objdump is None and launched is None and \
            any(rule.rule in KERNEL_RULES for rule in ex.technique):
        # Without the host code a kernel nothing launches would count.
        stage.status = StageStatus.ERROR
        stage.message = ("objdump not found (binutils); which kernels your code launches "
                         "was not checked, nor the rules about kernels")
        return stage
    start = time.monotonic()
    try:
        found = inspect(library, cuobjdump, nm, tools.find("c++filt"), objdump)
    except ToolError as error:
        stage.status = StageStatus.ERROR
        stage.message = f"{error}; rules not checked"
        return stage
    stage.duration_s = round(time.monotonic() - start, 2)
    classify(stage, ex.technique, found, launched)
    return stage


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


# A chain of calls longer than this is not followed for the order of memory operations.
CALL_DEPTH = 8


def program_order(kernel: Function, found: Inspection) -> list[list[str]]:
    """Per copy of the kernel's code, its stores, atomics and fences in program order:
    subroutines inside its code (CALL.REL: without -rdc a called function lies after the
    kernel's body) and called functions (CALL.ABS with -rdc, named by the relocation at the
    call) are spliced in where they are called."""
    return [_walk(kernel, memory, found, (kernel.name,)) for memory in kernel.memory]


def _walk(function: Function, memory: list, found: Inspection, stack: tuple) -> list[str]:
    starts = sorted({target for _, kind, target in memory if kind == "call_rel"})

    def segment(start: int, active: frozenset) -> list[str]:
        end = next((s for s in starts if s > start), None)
        out: list[str] = []
        for address, kind, target in memory:
            if address < start or (end is not None and address >= end):
                continue
            if kind == "call_rel":
                if target not in active and len(active) < CALL_DEPTH:
                    out += segment(target, active | {target})
            elif kind == "call_abs":
                callee = found.functions.get(function.call_at.get(address, ""))
                if callee is not None and callee.memory and not callee.kernel and \
                        callee.name not in stack and len(stack) < CALL_DEPTH:
                    out += _walk(callee, callee.memory[0], found, stack + (callee.name,))
            else:
                out.append(kind)
        return out

    return segment(0, frozenset({0}))


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


@dataclass(frozen=True)
class _Use:
    """What a uses_* rule looks for: its description, how many a kernel (with its callees)
    has, and the words for one, several, and any (in "found SHFL only in ...")."""
    what: str
    count: object   # (Function, Inspection) -> int
    one: str
    many: str
    any: str


def _in_closure(attribute: str):
    return lambda k, found: sum(getattr(f, attribute) for f in closure(k, found))


USES = {
    "uses_shuffle": _Use(
        "warp shuffles (SHFL)", _in_closure("shuffles"), "SHFL", "SHFLs", "SHFL"),
    "uses_warp_vote": _Use(
        "warp votes on a predicate (VOTE: __ballot_sync, __any_sync, __all_sync)",
        _in_closure("votes"), "vote", "votes", "votes on a predicate"),
    "uses_shared_memory": _Use(
        "shared memory (LDS/STS/LDSM or a __shared__ array)",
        lambda k, found: _count(_merged_ops(closure(k, found)), SHARED_OPS)
        + sum(f.shared > 0 for f in closure(k, found)),
        "shared-memory use", "shared-memory uses", "shared memory"),
    "uses_constant_memory": _Use(
        "reads of __constant__ data (c[0x3][...])", _in_closure("bank3"),
        "c[0x3] read", "c[0x3] reads", "reads of __constant__ data"),
    "uses_readonly_path": _Use(
        "loads through the read-only path (LDG...CONSTANT from const __restrict__ or __ldg, "
        "or texture fetches)",
        lambda k, found: sum(f.readonly for f in closure(k, found))
        + _count(_merged_ops(closure(k, found)), TEXTURE_OPS),
        "read-only load", "read-only loads", "read-only loads"),
    "uses_texture": _Use(
        "texture fetches (TEX/TLD/TLD4)",
        lambda k, found: _count(_merged_ops(closure(k, found)), TEXTURE_OPS),
        "texture fetch", "texture fetches", "texture fetches"),
    "uses_vector_loads": _Use(
        "16-byte vector loads from global memory (LDG.E.128: int4/float4)",
        _in_closure("vector"), "16-byte load", "16-byte loads", "16-byte loads"),
    "uses_system_atomics": _Use(
        "system-scope atomics on global memory (ATOM/RED .SYS: atomicAdd_system, or "
        "atomic_ref with thread_scope_system)", _in_closure("system_atomics"),
        "system-scope atomic", "system-scope atomics", "system-scope atomics"),
    "uses_memory_fence": _Use(
        "a device-scope memory fence (MEMBAR.GPU or MEMBAR.SYS: __threadfence(), "
        "__threadfence_system(), or a release atomic_ref at device scope) between the global "
        "store of the data and the global atomic that publishes it",
        placed_fences, "device-scope fence", "device-scope fences",
        "a device-scope fence between a store and a later atomic"),
    "uses_device_launch": _Use(
        "a device-side kernel launch (cudaLaunchDevice)",
        lambda k, found: sum(1 for f in closure(k, found) for c in f.calls
                             if DEVICE_LAUNCH.search(c)),
        "device-runtime call", "device-runtime calls", "device-side launches"),
}


def check(rule: Technique, found: Inspection, reach: Reach | None = None) \
        -> tuple[bool, str, str]:
    """(passed, what was expected, what was found) for one rule; `reach` says which kernels
    run (by default what the host code read shows)."""
    if rule.rule == "no_library_calls":
        return _no_library_calls(rule, found)
    if rule.rule in ("calls_api", "avoids_api"):
        return _api_calls(rule, found)
    reach = reach if reach is not None else reachability(found)
    kernels = selected_kernels(rule, found)
    if rule.rule in USES:
        return _uses(rule, found, reach, kernels, USES[rule.rule])
    if rule.rule == "no_local_memory":
        return _limit(rule, found, reach, kernels, "no local memory (no spills: no LDL/STL, "
                      "0 bytes of stack and local)", _local_use)
    if rule.rule == "max_registers":
        return _limit(rule, found, reach, kernels,
                      f"at most {rule.value} registers per thread",
                      lambda k, fs: f"{k.registers} registers" if k.registers > rule.value
                      else "")
    raise ValueError(f"unknown rule {rule.rule!r}")  # the manifest refuses these


def _where(rule: Technique, found: Inspection, reach: Reach, live: list[Function],
           dead: list[Function]) -> str:
    """The kernels a rule is checked on, for "expected ... in <where>": named, and said to be
    the launched ones where others are not."""
    if not dead:
        return _which(rule, found, live)
    launched = f"a kernel {reach.launchers}"
    return f"{launched} ({_names(found, live)})" if live else launched


def _uses(rule, found, reach, kernels, use: _Use) -> tuple[bool, str, str]:
    """A uses_* rule: met when at least one selected kernel that runs (with its callees)
    shows it."""
    if not kernels:
        where = f"kernels matching /{rule.kernel}/" if rule.kernel else "your kernels"
        return False, f"{use.what} in {where}", _no_kernel(rule, found)
    live = [k for k in kernels if reach.counts(k.name)]
    dead = [k for k in kernels if not reach.counts(k.name)]
    expected = f"{use.what} in {_where(rule, found, reach, live, dead)}"
    using = [(k, n) for k, n in ((k, use.count(k, found)) for k in live) if n]
    if using:
        return True, expected, "; ".join(
            f"{n} {use.one if n == 1 else use.many} in {_short(found.pretty(k.name))}"
            for k, n in using[:4])
    unlaunched = [k for k in dead if use.count(k, found)]
    if unlaunched:
        return False, expected, f"{use.any} only in {_names(found, unlaunched)}, {reach.never}"
    if not live:
        return False, expected, f"none: {_names(found, dead)}, {reach.never}"
    return False, expected, "none" + _instead(rule, live, found)


def _instead(rule: Technique, kernels: list[Function], found: Inspection) -> str:
    """What the kernels do instead, when that tells the student something."""
    functions = [f for k in kernels for f in closure(k, found)]
    ops = _merged_ops(functions)
    if rule.rule == "uses_shuffle" and _count(ops, SHARED_OPS):
        return ": the kernel exchanges values through shared memory (LDS/STS)"
    if rule.rule == "uses_shuffle" and sum(f.atomic_broadcasts for f in functions):
        return (": its only SHFLs (SHFL.IDX) hand an atomic's result to the warp's other "
                "lanes, which nvcc emits when it groups a warp's atomics into one (and for "
                "grid.sync()); none exchanges values of yours")
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
    """What kernels without a well-placed device-scope fence have in its place, most telling
    first."""
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


def _local_use(kernel: Function, functions: list[Function]) -> str:
    spills = _count(_merged_ops(functions), LOCAL_OPS)
    stack = max(f.stack for f in functions)
    local = max(f.local for f in functions)
    parts = [f"{spills} LDL/STL"] if spills else []
    parts += [f"{stack} bytes of stack"] if stack else []
    parts += [f"{local} bytes of local memory"] if local else []
    return ", ".join(parts)


def _limit(rule, found, reach, kernels, what, breach) -> tuple[bool, str, str]:
    """A limit every selected kernel that runs must keep (with its callees)."""
    if not kernels:  # a limit no kernel can break is no evidence the student kept it
        where = f"kernels matching /{rule.kernel}/" if rule.kernel else "your kernels"
        return False, f"{what} in {where}", _no_kernel(rule, found)
    live = [k for k in kernels if reach.counts(k.name)]
    dead = [k for k in kernels if not reach.counts(k.name)]
    expected = f"{what} in {_where(rule, found, reach, live, dead)}"
    if not live:
        return False, expected, f"none: {_names(found, dead)}, {reach.never}"
    breaches = [(k, breach(k, closure(k, found))) for k in live]
    bad = [f"{_short(found.pretty(k.name))}: {b}" for k, b in breaches if b]
    if bad:
        return False, expected, "; ".join(bad[:4])
    if rule.rule == "max_registers":
        return True, expected, ", ".join(f"{k.registers} in {_short(found.pretty(k.name))}"
                                         for k in live[:4])
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
