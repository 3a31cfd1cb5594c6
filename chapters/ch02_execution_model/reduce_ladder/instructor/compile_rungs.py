"""Writes ../reduce_ladder_rungs.cu, the compiled form of the course's copies of rungs 1, 5 and 6
(reduce_ladder_rungs.cu in this folder, course-only), and checks that the two compile alike.

Why: the ladder's benchmark times those copies as the baselines of rungs 2 to 7, so every copy of
the course needs them, but their source is a working answer to three graded rungs and the student
template must not hold it. A prebuilt object would tie the template to one toolkit and one GPU;
PTX does not. So nvcc compiles the readable kernels to PTX here, once for every virtual
architecture it knows, and the generated file holds each kernel's PTX body as inline assembly in
a kernel of the same signature, the body chosen by __CUDA_ARCH__ (nvcc 13 writes one body up to
compute_90 and another from compute_100). Every copy of the course compiles that file with its
own nvcc for its own GPU, and ptxas makes the same machine code as from the readable source
(same_machine_code compares them instruction by instruction; tests/test_template.py runs it), so
the rungs' thresholds keep their meaning. A student's source may not hold inline assembly
(grader/stages/sources.py refuses it), so these kernels cannot be pasted into a submission.

    python3 chapters/ch02_execution_model/reduce_ladder/instructor/compile_rungs.py [--check]

Without arguments it writes the file; --check compiles both files for every real architecture
nvcc knows and exits 1 naming each kernel and architecture whose machine code differs. Needs nvcc
(and cuobjdump for --check); standard library and the grader's tool finder only.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
LADDER = HERE.parent
COURSE = LADDER.parents[2]
READABLE = HERE / "reduce_ladder_rungs.cu"
GENERATED = LADDER / "reduce_ladder_rungs.cu"

sys.path.insert(0, str(COURSE))
sys.path.insert(0, str(COURSE / "scripts"))
# The general tool's toolkit helpers (it compiles the other course kernels the same way).
from compile_course_kernels import (CompileError, _run, architectures, nvcc,  # noqa: E402,F401
                                     sass_instructions)

# The rungs: the template arguments of course_rung_kernel<kLoads, kTree> as nvcc mangles them,
# the rung's name and kLoads (how many data blocks a thread block sums).
RUNGS = (("ILi1ELNS_10CourseTreeE0EE", "v1_neighbored", 1),
         ("ILi8ELNS_10CourseTreeE1EE", "v5_unroll8", 8),
         ("ILi8ELNS_10CourseTreeE2EE", "v6_unroll_last_warp", 8))
# The course's device flags (meson.build; buildtype release adds -O3).
FLAGS = ["-std=c++17", "--expt-relaxed-constexpr",
         f"-I{COURSE / 'support' / 'include'}", f"-I{LADDER}"]
# The dynamic shared memory, named in C so that the PTX can use it by name, as nvcc's own does.
# (Through an operand's register instead, ptxas computed its address once and kept it, which is
# not the machine code of the readable kernels.)
SHARED = "course_ladder_rung_shared"

_ENTRY = re.compile(r"^\.(?:visible\s+|weak\s+)?entry\s+(\S+)\((.*?)\)\s*\{\n(.*?)\n\}",
                    re.M | re.S)
_EXTERN_SHARED = re.compile(r"^\.extern\s+\.shared\s+.*?\s(\S+)\[\];", re.M)
_REG_DECL = re.compile(r"\.reg\s+\.\w+\s+%(\w+?)<\d+>;")


def kernel_name(rung: str) -> str:
    return f"course_ladder_rung_{rung}"


def bodies(arch: int) -> dict[str, str]:
    """Each rung's kernel body in the PTX nvcc makes for compute_<arch>, as inline assembly."""
    text = _run([nvcc(), *FLAGS, f"-arch=compute_{arch}", "-ptx", str(READABLE), "-o", "-"])
    shared = _EXTERN_SHARED.findall(text)
    if len(shared) != 1:
        raise CompileError(f"expected one extern shared array in the PTX of {READABLE.name}, "
                           f"found {len(shared)}")
    found = {}
    for name, _params, body in _ENTRY.findall(text):
        for key, rung, _loads in RUNGS:
            if "course_rung_kernel" + key in name:
                body = body.replace(f"{name}_param_", f"{kernel_name(rung)}_param_")
                found[rung] = as_inline_assembly(body, rung, shared[0])
    missing = [rung for _key, rung, _loads in RUNGS if rung not in found]
    if missing:
        raise CompileError(f"no kernel for {', '.join(missing)} in the PTX of {READABLE.name}")
    return found


def as_inline_assembly(body: str, rung: str, shared: str) -> str:
    """The body as the text of an asm statement, one instruction a line: registers and labels
    renamed so that nothing clashes with what nvcc declares around it, the dynamic shared
    memory's symbol renamed to SHARED, every % doubled as asm requires (the statement has an
    operand), comments and blank lines dropped."""
    prefixes = sorted(set(_REG_DECL.findall(body)), key=len, reverse=True)
    if prefixes:
        body = re.sub(r"%(" + "|".join(prefixes) + r")(\d+|<)", r"%course_\1\2", body)
    body = re.sub(r"\$L__(\w+)", rf"$L__course_{rung}_\1", body)
    body = re.sub(rf"(?<![\w$]){re.escape(shared)}(?![\w$])", SHARED, body)
    lines = [" ".join(line.split()) for line in body.replace("%", "%%").splitlines()]
    return "\n".join(["{"] + [line for line in lines if line and not line.startswith("//")] +
                     ["}"])


def generated_source() -> str:
    archs = architectures()
    with ThreadPoolExecutor(max_workers=4) as pool:
        per_arch = list(pool.map(bodies, archs))
    # Runs of consecutive architectures with the same bodies: (first arch, last arch, bodies).
    groups: list[list] = []
    for arch, found in zip(archs, per_arch):
        if groups and groups[-1][2] == found:
            groups[-1][1] = arch
        else:
            groups.append([arch, arch, found])
    version = re.search(r"release [\d.]+, V[\d.]+", _run([nvcc(), "--version"]))
    out = [
        "// GENERATED by instructor/compile_rungs.py from the course's readable copies of rungs",
        f"// 1, 5 and 6, with nvcc {version.group(0) if version else '(unknown version)'}; do not "
        "edit.",
        "//",
        "// The baselines the ladder's benchmark times for rungs 2 to 7 (reduce_ladder.h). Each",
        "// kernel's body is the PTX nvcc makes from the readable kernel for the GPU's",
        "// architecture, from which ptxas makes the same machine code, so the rungs' thresholds",
        "// hold as measured. The readable source is course-only: it answers three graded rungs.",
        "#include <cuda_runtime.h>",
        "",
        "#include <cstddef>",
        "",
        '#include "course/check.h"',
        '#include "reduce_ladder.h"',
        "",
        "// Kernels and shared memory with C names, so that the PTX can use them by name.",
        'extern "C" {',
        "",
        f"extern __shared__ long long {SHARED}[];",
    ]
    for _key, rung, _loads in RUNGS:
        name = kernel_name(rung)
        out += ["",
                f"__global__ void {name}(const int* __restrict__ in, int n,",
                f"{' ' * (len(name) + 16)}long long* __restrict__ partial) {{",
                "  (void)in;",
                "  (void)n;",
                "  (void)partial;"]
        for index, (first, last, found) in enumerate(reversed(groups)):
            if len(groups) > 1:
                if index == len(groups) - 1:
                    out.append("#else")
                else:
                    out.append(f"#{'if' if index == 0 else 'elif'} __CUDA_ARCH__ >= {first}0")
            out.append(f"  // PTX for compute_{first}" +
                       (f" to compute_{last}" if last != first else ""))
            out.append("  asm volatile(")
            out += [f'      "{line}\\n"' for line in found[rung].splitlines()]
            # The operand only makes nvcc declare the shared array in the PTX; its register
            # is never read, and ptxas drops it.
            out += ["      :", f'      : "l"({SHARED})', '      : "memory");']
        if len(groups) > 1:
            out.append("#endif")
        out.append("}")
    out += [
        "",
        '}  // extern "C"',
        "",
        "namespace {",
        "",
        "using RungKernel = void (*)(const int*, int, long long*);",
        "",
        "// ceil(n / (loads * block_size)) blocks of block_size threads, one long long of dynamic",
        "// shared memory per thread, then the second pass (which writes 0 when there is no block:",
        "// n = 0).",
        "void run_course_rung(RungKernel kernel, int loads, const int* in, int n, int block_size,",
        "                     long long* partial, long long* out, cudaStream_t stream) {",
        "  require_reduce_block_size(block_size);",
        "  const std::size_t elements_per_block = static_cast<std::size_t>(loads) * block_size;",
        "  const auto blocks = static_cast<int>(",
        "      (static_cast<std::size_t>(n) + elements_per_block - 1) / elements_per_block);",
        "  if (blocks == 0) return reduce_partials(partial, 0, out, stream);",
        "  const std::size_t shared_bytes = sizeof(long long) * block_size;",
        "  kernel<<<blocks, block_size, shared_bytes, stream>>>(in, n, partial);",
        "  CUDA_CHECK_LAUNCH();",
        "  reduce_partials(partial, blocks, out, stream);",
        "}",
        "",
        "}  // namespace",
    ]
    for _key, rung, loads in RUNGS:
        name = f"course_reduce_{rung}"
        out += ["",
                f"void {name}(const int* in, int n, int block_size, long long* partial,",
                f"{' ' * (len(name) + 6)}long long* out, cudaStream_t stream) {{",
                f"  run_course_rung({kernel_name(rung)}, {loads}, in, n, block_size, partial, "
                "out, stream);",
                "}"]
    return "\n".join(out) + "\n"


def sass(source: Path, archs: list[int], workdir: Path) -> dict[tuple[int, str], list[str]]:
    """(arch, kernel) -> its SASS instructions (addresses, encodings and comments left out), for
    source compiled as the course compiles device code."""
    obj = workdir / f"{source.parent.name}_{source.stem}.o"
    gencode = [f"-gencode=arch=compute_{a},code=[sm_{a},compute_{a}]" for a in archs]
    _run([nvcc(), *FLAGS, "-O3", "-lineinfo", *gencode, "-c", str(source), "-o", str(obj)])
    return sass_instructions(obj)


def same_machine_code(archs: list[int] | None = None) -> list[str]:
    """What differs between the readable kernels and the generated ones compiled for each of
    archs (default: every one nvcc knows): one line per kernel and architecture, none when all
    match."""
    archs = archs or architectures()
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max_workers=2) as pool:
        readable, generated = pool.map(lambda source: sass(source, archs, Path(scratch)),
                                       (READABLE, GENERATED))
    problems = []
    for arch in archs:
        for key, rung, _loads in RUNGS:
            mine = [code for (a, name), code in readable.items()
                    if a == arch and "course_rung_kernel" + key in name]
            theirs = generated.get((arch, kernel_name(rung)))
            if len(mine) != 1 or theirs is None:
                problems.append(f"sm_{arch} {rung}: kernel not found")
            elif mine[0] != theirs:
                problems.append(f"sm_{arch} {rung}: the machine code differs ({len(mine[0])} and "
                                f"{len(theirs)} instructions); run {Path(__file__).name} again")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare the machine code of the two files on every architecture")
    args = parser.parse_args(argv)
    try:
        if args.check:
            problems = same_machine_code()
            for problem in problems:
                print(problem, file=sys.stderr)
            return 1 if problems else 0
        GENERATED.write_text(generated_source(), encoding="utf-8")
    except CompileError as error:
        print(error, file=sys.stderr)
        return 2
    print(f"wrote {GENERATED.relative_to(COURSE)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
