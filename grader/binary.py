"""Reads a compiled library with the toolkit's and binutils' tools, never running it: what
the technique and integrity stages judge. Everything that starts cuobjdump, nm, c++filt or
objdump and parses what they print lives here, so both stages read an object the same way and
a change of a tool's output format is mended in one place.

Device code comes from cuobjdump (-symbols: which functions are kernels; -sass: instructions;
-res-usage: registers, stack, local and shared bytes; -elf: relocations, i.e. what a function
calls), host symbols from nm, host code from objdump (which host function refers to which).
inspect() gathers it all into an Inspection; the integrity stage asks nm and objdump for the
symbols and callers it needs.
"""

from __future__ import annotations

import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from grader import proc

TOOL_TIMEOUT_S = 120
OUTPUT_LIMIT = 64 * 1024 * 1024  # -elf of an object with CUB kernels runs to megabytes

# The libraries a no_library_calls rule can forbid (grader/manifest.py accepts exactly these
# names), by how their code shows in an object: C++ libraries by their namespace (their headers'
# code is compiled into it), C libraries by the prefix of the functions it calls.
NAMESPACE_LIBRARIES = ("cub", "thrust")
C_LIBRARIES = ("cublas", "cudnn", "cufft", "curand", "cusparse", "cusolver")
FORBIDDABLE_LIBRARIES = NAMESPACE_LIBRARIES + C_LIBRARIES
# Namespaces of the code CUDA's headers compile into an object (CUB, Thrust, cuda:: atomics and
# barriers): the libraries' code, not the student's.
HEADER_NAMESPACES = NAMESPACE_LIBRARIES + ("cuda",)
# NVTX v3's own functions (nvtxDomainCreateA_impl_init_v3, ...), compiled into any object
# that includes CUB.
_NVTX_IMPL = re.compile(r"^nvtx\w+_impl(?:_init)?_v3$")

# An instruction guarded by the constant false predicate never runs: ptxas pads fences and
# cp.async waits with "@!PT LDS RZ, [RZ]" (four before every __threadfence() with -rdc), which
# must not count as shared memory, nor anything else.
NEVER_RUNS = ("@!PT", "@!UPT")
SHARED_OPS = ("LDS", "STS", "LDSM", "STSM", "ATOMS", "LDGSTS")
LOCAL_OPS = ("LDL", "STL")
# Asynchronous copies from global into shared memory: LDGSTS (cp.async: cuda::memcpy_async with a
# per-thread pipeline, __pipeline_memcpy_async, inline PTX), and on Hopper the bulk copy
# (UBLKCP.S.G: cp.async.bulk into shared memory) and the tensor copy (UTMALDG: TMA). Their
# shared-to-global forms (UBLKCP.G.S, UTMASTG) stage nothing into shared memory and do not count.
ASYNC_COPY_OPS = ("LDGSTS", "UTMALDG")
# Distributed shared memory (thread-block clusters, compute capability 9.0): cluster.map_shared_rank
# (PTX mapa) writes the target block's rank into bits 24-31 of a shared-window address. ptxas 13
# emits it on sm_90 as PRMT Rd, Rrank, 0x654, Raddr (MAPA where an architecture has the
# instruction), and the access through the result is a generic LD/ST/ATOM/RED, never
# LDS/STS/ATOMS, whether the source said atomicAdd or red.shared::cluster. parse_sass follows the
# registers holding such an address through the arithmetic that indexes it.
CLUSTER_MAP_SELECTOR = "0x654"
GENERIC_ACCESS_OPS = ("LD", "ST", "ATOM", "RED")
_ADDRESS_REGISTER = re.compile(r"\[(U?R\d+)")
_ANY_REGISTER = re.compile(r"\bU?R\d+\b")
_UNIFORM_REGISTER = re.compile(r"^UR(\d+)$")
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
    async_copies: int = 0           # global-to-shared async copies (ASYNC_COPY_OPS, UBLKCP.S.G)
    cluster_accesses: int = 0       # generic LD/ST/ATOM/RED through a cluster-mapped address
    registers: int = 0
    stack: int = 0
    local: int = 0
    shared: int = 0
    calls: set = field(default_factory=set)        # symbols its relocations name
    call_at: dict = field(default_factory=dict)    # relocation offset -> symbol (CALL.ABS)
    # Per copy of the function in -sass: (address, kind, target) in address order, kind one
    # of store, atomic, fence (device scope), cluster_access (distributed shared memory),
    # cluster_wait (a cluster barrier), call_rel (target: an address in the same code),
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
    """What inspect() read from a library: its device functions, host symbols and host code."""
    functions: dict = field(default_factory=dict)  # mangled name -> Function
    host: list = field(default_factory=list)       # (mangled name, nm type)
    demangled: dict = field(default_factory=dict)  # mangled -> demangled
    host_code: HostCode | None = None              # None: not read (every kernel counts)

    def function(self, name: str) -> Function:
        return self.functions.setdefault(name, Function(name))

    def pretty(self, name: str) -> str:
        return self.demangled.get(name, name)


# ------------------------------------------------------------------------------ parsers

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
    current, memory, writer, mapped = None, [], {}, set()
    for line in text.splitlines():
        m = _SASS_FUNCTION.match(line)
        if m:
            current, memory, writer, mapped = into.function(m.group(1)), [], {}, set()
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
        if op in ASYNC_COPY_OPS or (op == "UBLKCP" and modifiers.startswith(".S.G")):
            current.async_copies += 1
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
        _follow_cluster_addresses(current, address, op, modifiers, arguments, mapped, memory)


def _follow_cluster_addresses(function: Function, address: int, op: str, modifiers: str,
                              arguments: list[str], mapped: set, memory: list) -> None:
    """Counts the generic accesses whose address register holds a cluster-mapped shared
    address (CLUSTER_MAP_SELECTOR), and puts them and the cluster barrier's waits
    (UCGABAR_WAIT) in `memory`'s program order. `mapped`: the registers that hold such an
    address at this point of the listing (address order, which is how ptxas lays out the
    address before its use)."""
    if op == "UCGABAR_WAIT":
        memory.append((address, "cluster_wait", None))
    maps = op == "MAPA" or (op in ("PRMT", "UPRMT") and len(arguments) > 2
                            and arguments[2] == CLUSTER_MAP_SELECTOR)
    if not maps and not mapped:
        return  # nothing mapped yet: the common case, kept cheap for large objects
    written = _written_registers(op, modifiers, arguments)
    m = _UNIFORM_REGISTER.match(arguments[0]) if arguments else None
    if not written and m and op.startswith("U"):
        wide = ".64" in modifiers or ".WIDE" in modifiers
        written = [f"UR{int(m.group(1)) + i}" for i in range(2 if wide else 1)]
    if maps:
        mapped.update(written)
        return
    if op in GENERIC_ACCESS_OPS:
        if any(r in mapped for r in _ADDRESS_REGISTER.findall(", ".join(arguments))):
            function.cluster_accesses += 1
            memory.append((address, "cluster_access", None))
        mapped.difference_update(written)  # a loaded value is data, not an address
        return
    first = 2 if op in _PREDICATE_FIRST and arguments and _PREDICATE.match(arguments[0]) else 1
    sources = _ANY_REGISTER.findall(", ".join(arguments[first:]))
    if any(r in mapped for r in sources):
        mapped.update(written)
    else:
        mapped.difference_update(written)


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
    # The tools read the same file and share nothing: they run at once (a technique stage
    # waits for the slowest of them, not for their sum).
    commands = {"symbols": ([cuobjdump, "-symbols", lib], False),
                "sass": ([cuobjdump, "-sass", lib], False),
                "res_usage": ([cuobjdump, "-res-usage", lib], False),
                "elf": ([cuobjdump, "-elf", lib], False)}
    if nm:
        commands["nm"] = ([nm, "-P", lib], False)
    if objdump:
        commands["disassembly"] = ([objdump, "-d", "-r", "-t", "--no-show-raw-insn", lib], True)
        commands["records"] = ([objdump, "-r", lib], True)
    with ThreadPoolExecutor(max_workers=len(commands), thread_name_prefix="inspect") as pool:
        runs = {key: pool.submit(_tool, args, whole) for key, (args, whole) in commands.items()}
        out = {key: run.result() for key, run in runs.items()}  # the first ToolError raises
    parse_symbols(out["symbols"], found)
    parse_sass(out["sass"], found)
    parse_res_usage(out["res_usage"], found)
    parse_relocations(out["elf"], found)
    if any(f.ops for f in found.functions.values()) and \
            not any(f.kernel for f in found.functions.values()):
        # Device code with no kernel: a symbol table this parser cannot read (device
        # functions nothing launches are not compiled without -rdc, and with -rdc a
        # submission without kernels is judged wrongly either way).
        raise ToolError("cuobjdump -symbols named no kernel although the library has device "
                        "code: its output format is not one the grader reads")
    if nm:
        parse_nm(out["nm"], found)
    if objdump:
        parse_host_code(out["disassembly"], out["records"], found)
    # Only for messages and kernel regexes; mangled names serve when it fails.
    found.demangled = demangle(sorted(set(found.functions) | {n for n, _ in found.host}),
                               cxxfilt)
    return found


# -------------------------------------------------------------------- device call graph

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
    """Per copy of the kernel's code, its stores, atomics, fences and accesses to and waits
    of a cluster in program order:
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


# ------------------------------------------------- host symbols and callers (integrity)

def _read(args: list[str]) -> str:
    """The whole output of a tool reading a library: a failure, or an output cut short (which
    could hide a forbidden call), is an error."""
    result = proc.run(args, TOOL_TIMEOUT_S, output_limit=OUTPUT_LIMIT)
    if result.returncode != 0 or result.truncated:
        last = next((l for l in reversed(result.output.splitlines()) if l.strip()), "")
        raise ToolError(f"{Path(args[0]).name} could not read {Path(args[-1]).name} "
                        f"({result.describe_exit()}): {last.strip()[:300]}")
    return result.output


def symbols(nm: str, library: Path, defined: bool) -> set[str]:
    """The mangled names the library defines (`defined`) or calls without defining."""
    which = "--defined-only" if defined else "--undefined-only"
    out = set()
    for line in _read([nm, "-P", which, str(library)]).splitlines():
        if not line or line.endswith(":"):
            continue  # an archive member's header
        m = NM_LINE.match(line)
        if m and (not defined or m.group(2) not in "Uw"):
            out.add(m.group(1))
    return out


def disassemble(objdump: str, library: Path) -> str:
    """The library's host code with its relocations (objdump -dr), for callers()."""
    return _read([objdump, "-dr", "--no-show-raw-insn", str(library)])


def by_function(disassembly: str):
    """(function, line) for each line of objdump output, under the function it belongs to."""
    function = "?"
    for line in disassembly.splitlines():
        header = _OBJ_FUNCTION.match(line)
        if header:
            function = header.group(2)
        else:
            yield function, line


def callers(symbol: str, disassembly: str) -> set[str]:
    """The functions of `objdump -dr` output whose code refers to `symbol` (a relocation)."""
    reference = re.compile(rf"\sR_\w+\s+{re.escape(symbol)}(?:[-+]0x[0-9a-f]+)?$")
    return {function for function, line in by_function(disassembly)
            if reference.search(line)}


def only_from_libraries(symbol: str, disassembly: str) -> bool:
    """True when every call to `symbol` comes from a library header's code, not the
    student's: NVTX, which CUB's headers include, loads its tool with dlopen and dlsym."""
    functions = callers(symbol, disassembly)
    return bool(functions) and all(_NVTX_IMPL.match(f) or any(
        in_namespace(f, ns) for ns in HEADER_NAMESPACES) for f in functions)
