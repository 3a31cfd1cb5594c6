"""The integrity stage: what the student's compiled code calls, read before anything runs.

A kernel earns points only for work it did. The student's static library
(lib<name>_submission.a) is read with nm and objdump (grader/binary.py); a call it makes to any
of these rejects the exercise before its code runs, and the verdict names each call and why it
is forbidden:

* the course's own code: baselines, references, ceilings, the test and benchmark harness (every
  symbol defined in the course libraries the exercise's programs link), except the support
  functions the course's macros call and the functions the manifest's `course_calls` hands the
  student;
* GoogleTest, which could mark cases passed;
* files, file descriptors, processes, threads, signals, the environment and dynamic loading,
  which a kernel exercise never needs and which could forge results, leave work running past
  the program or reach a library the exercise forbids (C++ file streams and std::thread too);
* a system call made directly (a `syscall` instruction in the host code, read with objdump).

Forbidden libraries (CUB, cuBLAS) stay the technique stage's business, per exercise.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from grader import binary, tools
from grader.manifest import Exercise
from grader.model import CaseResult, CaseStatus, StageName, StageResult, StageStatus
from grader.stages.common import GradeOptions

# The course libraries every build directory has (meson.build): the support library, the test
# main, the benchmark main and the ceilings main; beside them each exercise's course code and
# each shared folder's (course_libraries).
COURSE_LIBRARIES = ("libcourse_support.a", "libcourse_testing.a", "libcourse_bench_main.a",
                    "libcourse_ceilings_main.a")

# What CUDA_CHECK and CUDA_CHECK_LAUNCH expand to, sm_count for grid sizes, and the error type
# a student may catch: the support library's student-facing part.
SUPPORT_CALLS = ("course::throw_cuda_error", "course::check_launch", "course::sm_count",
                 "course::CudaError")

# C functions by what they do; each name also matches its glibc variants (open64, __open_2).
FORBIDDEN_C = {
    "opens, reads or writes files or file descriptors": (
        "open", "openat", "creat", "fopen", "freopen", "fdopen", "read", "pread", "readv",
        "preadv", "write", "pwrite", "writev", "pwritev", "fwrite", "fread", "close", "dup",
        "dup2", "dup3", "unlink", "unlinkat", "remove", "rename", "renameat", "truncate",
        "ftruncate", "mmap", "mprotect", "memfd_create", "sendfile", "splice", "ioctl",
        "fcntl", "mkstemp", "tmpfile"),
    "starts processes or threads, or signals them": (
        "fork", "vfork", "clone", "clone3", "execve", "execv", "execvp", "execvpe", "execl",
        "execlp", "execle", "fexecve", "system", "popen", "posix_spawn", "posix_spawnp",
        "daemon", "setsid", "setpgid", "kill", "killpg", "tgkill", "ptrace", "prctl",
        "pthread_create", "thrd_create", "signal", "sigaction", "raise", "alarm"),
    "changes the environment": ("setenv", "putenv", "unsetenv", "clearenv"),
    "loads code at run time or calls the kernel directly": (
        "dlopen", "dlmopen", "dlsym", "dlvsym", "dladdr", "syscall"),
}
_C_VARIANT = re.compile(r"^_*(?P<base>[a-z_]+?)(?:64)?(?:_2|_chk)?$")

# C++ names (demangled) by what they do.
FORBIDDEN_CXX = {
    "runs GoogleTest code (it could mark cases passed)": re.compile(r"^(?:\w+ for )?testing::"),
    "opens files": re.compile(r"std::(?:__cxx11::)?basic_(?:i|o)?fstream|std::basic_filebuf|"
                              r"std::filesystem::"),
    "starts threads": re.compile(r"std::thread::|std::jthread::|std::async"),
}

_SYSCALL = re.compile(r"\s(syscall|sysenter|int\s+\$0x80)\b")


@dataclass(frozen=True)
class Finding:
    symbol: str      # demangled where possible
    why: str


def run(options: GradeOptions, ex: Exercise) -> StageResult:
    stage = StageResult(StageName.INTEGRITY, StageStatus.PASSED)
    nm = tools.find("nm")
    library = options.build_dir / f"lib{ex.name}_submission.a"
    if nm is None:
        stage.status = StageStatus.ERROR
        stage.message = "nm not found (binutils), so what the code calls was not checked"
        return stage
    if not library.is_file():
        stage.status = StageStatus.ERROR
        stage.message = f"{library.name} not found in the build directory; nothing checked"
        return stage
    try:
        undefined = binary.symbols(nm, library, defined=False)
        course = set()
        for lib in course_libraries(options.build_dir, ex):
            course |= defined_symbols(nm, lib)
        names = binary.demangle(sorted(undefined | course), tools.find("c++filt"))
        findings = check(undefined, course, names, ex.course_calls)
        objdump = tools.find("objdump")
        if objdump is not None:
            disassembly = binary.disassemble(objdump, library)
            # What only NVTX or the libraries' headers call is theirs, not the student's.
            findings = [f for f in findings
                        if not binary.only_from_libraries(f.symbol, disassembly)]
            findings += direct_system_calls(disassembly)
    except binary.ToolError as error:
        stage.status = StageStatus.ERROR
        stage.message = f"{error}; nothing checked"
        return stage
    classify(stage, findings)
    return stage


# What each course library defines, read once per grader process: every exercise links the
# support libraries, and reading them again for each exercise (one nm each) was most of the
# stage's time. A library that changed since (another size, time or inode: rebuilt) is read
# again.
_DEFINED: dict[tuple, frozenset[str]] = {}
_DEFINED_LOCK = threading.Lock()


def defined_symbols(nm: str, library: Path) -> frozenset[str]:
    """binary.symbols(nm, library, defined=True), remembered for the library as it is now."""
    st = library.stat()
    key = (nm, str(library.resolve()), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)
    with _DEFINED_LOCK:
        found = _DEFINED.get(key)
    if found is None:
        found = frozenset(binary.symbols(nm, library, defined=True))
        with _DEFINED_LOCK:
            _DEFINED[key] = found
    return found


def course_libraries(build_dir: Path, ex: Exercise) -> list[Path]:
    """The course libraries that the exercise's programs link (meson.build): the support
    libraries, its own (lib<name>_course.a) and its shared folder's. Only these can define
    what its code calls: a call into another exercise's course code does not link. Reading
    the other forty-odd too would cost a one-exercise re-grade one nm each."""
    names = list(COURSE_LIBRARIES) + [f"lib{ex.name}_course.a"]
    if ex.shared:
        names.append(f"lib{ex.chapter}_{ex.shared}_shared.a")
    return [build_dir / name for name in names if (build_dir / name).is_file()]


def check(undefined: set[str], course: set[str], names: dict[str, str],
          course_calls: tuple[str, ...]) -> list[Finding]:
    """Every forbidden call among the library's undefined symbols."""
    allowed = SUPPORT_CALLS + tuple(course_calls)
    findings = []
    for symbol in sorted(undefined):
        pretty = names.get(symbol, symbol)
        why = forbidden_c(symbol) or forbidden_cxx(pretty)
        if not why and symbol in course and not _allowed(pretty, allowed):
            why = ("is the course's own code (a baseline, reference or the harness): a "
                   "submission's points must come from its own kernels")
        if why:
            findings.append(Finding(pretty, why))
    return findings


def forbidden_c(symbol: str) -> str:
    m = _C_VARIANT.match(symbol)
    base = m.group("base") if m else symbol
    for why, functions in FORBIDDEN_C.items():
        if symbol in functions or base in functions:
            return why
    return ""


def forbidden_cxx(pretty: str) -> str:
    return next((why for why, pattern in FORBIDDEN_CXX.items() if pattern.search(pretty)), "")


def _allowed(pretty: str, allowed: tuple[str, ...]) -> bool:
    """`pretty` is one of the allowed functions (or, for a class, one of its members or its
    typeinfo and vtable)."""
    bare = re.sub(r"^(?:typeinfo|typeinfo name|vtable) for ", "", pretty).split("(", 1)[0]
    return any(bare == name or bare.startswith(name + "::") for name in allowed)


def direct_system_calls(disassembly: str) -> list[Finding]:
    """Functions of the host code with a system call instruction of their own."""
    findings = [Finding(function, "makes a system call directly (inline assembly), past "
                                  "every check of what it calls")
                for function, line in binary.by_function(disassembly) if _SYSCALL.search(line)]
    return list(dict.fromkeys(findings))


def classify(stage: StageResult, findings: list[Finding]) -> None:
    stage.details["forbidden"] = [{"symbol": f.symbol, "why": f.why} for f in findings]
    stage.cases = [CaseResult(f"calls {f.symbol}", CaseStatus.FAILED, f"{f.symbol} {f.why}")
                   for f in findings]
    if not findings:
        stage.message = "calls nothing it must not"
        return
    stage.status = StageStatus.FAILED
    shown = "; ".join(f"{f.symbol} ({f.why})" for f in findings[:3])
    more = f"; and {len(findings) - 3} more" if len(findings) > 3 else ""
    stage.message = (f"the code calls what a submission must not: {shown}{more}. Nothing was "
                     "run and no points are given")

