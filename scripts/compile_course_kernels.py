"""Compiles the course's readable copies of kernels that answer graded exercises to PTX in
inline assembly, and checks that the two compile alike.

Why: a course baseline (the starting point an exercise's speedups are measured against) can be
nearly the exercise's answer, yet every copy of the course needs it, the student template
included. A prebuilt object would tie the template to one toolkit and one GPU; PTX does not. So
the readable kernels live in an instructor/ folder, which the template leaves out, and this
script writes their compiled form beside it: each kernel's body is the PTX nvcc makes from the
readable kernel, as an asm statement, one body per run of virtual architectures with the same
PTX, chosen by __CUDA_ARCH__. Every copy of the course compiles that file with its own nvcc for
its own GPU, and ptxas makes the same machine code as from the readable source (--check
compares them instruction by instruction, and their resource usage), so the baselines, and the
thresholds calibrated against them, keep their meaning. A student's source may not hold inline
assembly (grader/stages/sources.py refuses it), so these kernels cannot be pasted into a
submission.

A unit is an exercise folder's instructor/<stem>_kernels.cu (readable, course-only) and
<stem>_kernels.h beside the exercise (shipped; it declares the kernels, in one namespace or at
global scope, with the launch bounds they have). The script writes <stem>_kernels.cu into the
exercise folder (a course source: grader/manifest.py course_sources compiles it into the
exercise's course library), where the header's kernels are defined with PTX bodies; the
baseline's host launchers include the header and launch them. Both files define the kernels
against the same declarations, so they have the same (mangled) names, and the PTX of the
readable one refers to its parameters by the very names the generated kernel has. A unit's
kernels must not be templates, and everything they call must be inlined (no .func in the PTX).

The reduction ladder's rungs (templates, launched through C-named wrappers) have their own
script, chapters/ch02_execution_model/reduce_ladder/instructor/compile_rungs.py.

    python3 scripts/compile_course_kernels.py [--check] [--arch N ...] [UNIT ...]

UNIT is an exercise name or a path to an instructor/<stem>_kernels.cu; without any, every
chapters/*/*/instructor/*_kernels.cu. Without --check it writes the generated files; --check
compiles both files of each unit for every real architecture nvcc knows (or those given with
--arch) and exits 1 naming each kernel and architecture whose machine code differs. Needs nvcc
(and cuobjdump for --check); standard library and the grader's tool finder only. This script
holds no kernels, but the template leaves it out with the rest of scripts/ (grader/template.py
ships only what students run): it rewrites files a student has no readable source for.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

COURSE = Path(__file__).resolve().parents[1]
SUFFIX = "_kernels"

sys.path.insert(0, str(COURSE))
from grader import tools  # noqa: E402

# The course's device flags (meson.build; buildtype release adds -O3).
FLAGS = ["-std=c++17", "--expt-relaxed-constexpr", f"-I{COURSE / 'support' / 'include'}"]

_ENTRY = re.compile(r"^(?:\.visible\s+|\.weak\s+)?\.entry\s+(\S+)\((.*?)\)\s*([^{]*?)\s*"
                    r"\{\n(.*?)\n\}", re.M | re.S)
_REG_DECL = re.compile(r"\.reg\s+\.\w+\s+%(\w+?)<\d+>;")
_NAMESPACE = re.compile(r"^namespace\s+(\w+)\s*\{", re.M)
# A kernel's declaration in the header: its text up to the parameter list's end, and its name.
_DECLARATION = re.compile(r"(__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*"
                          r"\(([^;{]*?)\))\s*;", re.S)


class CompileError(Exception):
    pass


@dataclass(frozen=True)
class Kernel:
    name: str
    declaration: str  # as in the header, without the ';'
    parameters: tuple[str, ...]
    mangled: str  # how the PTX names it (no overloads, no templates)


@dataclass(frozen=True)
class Unit:
    readable: Path  # <exercise>/instructor/<stem>_kernels.cu
    generated: Path  # <exercise>/<stem>_kernels.cu
    header: Path  # <exercise>/<stem>_kernels.h
    namespace: str  # "" for global scope
    kernels: tuple[Kernel, ...]

    @property
    def name(self) -> str:
        return self.generated.stem

    @property
    def flags(self) -> list[str]:
        return [*FLAGS, f"-I{self.generated.parent}"]


def _mangled(name: str, namespace: str) -> str:
    if namespace:
        return f"_ZN{len(namespace)}{namespace}{len(name)}{name}E"
    return f"_Z{len(name)}{name}"


def unit(readable: Path) -> Unit:
    readable = readable.resolve()
    if readable.parent.name != "instructor" or not readable.stem.endswith(SUFFIX):
        raise CompileError(f"{readable}: not an instructor/<stem>{SUFFIX}.cu")
    folder = readable.parent.parent
    header = folder / f"{readable.stem}.h"
    if not header.is_file():
        raise CompileError(f"{readable.name}: no {header.relative_to(COURSE)} declaring its "
                           "kernels")
    text = header.read_text(encoding="utf-8")
    namespaces = _NAMESPACE.findall(text)
    if len(namespaces) > 1:
        raise CompileError(f"{header.name}: its kernels must be in one namespace")
    namespace = namespaces[0] if namespaces else ""
    kernels = []
    for declaration, name, params in _DECLARATION.findall(text):
        if "template" in text[:text.index(declaration)].rsplit(";", 1)[-1]:
            raise CompileError(f"{header.name}: {name} is a template")
        parameters = tuple(re.findall(r"(\w+)\s*$", p.strip())[0]
                           for p in params.split(",") if p.strip() and p.strip() != "void")
        prefix = _mangled(name, namespace)
        kernels.append(Kernel(name, declaration, parameters, prefix))
    if not kernels:
        raise CompileError(f"{header.name}: declares no __global__ kernel")
    return Unit(readable, folder / readable.name, header, namespace, tuple(kernels))


def units(selected: list[str]) -> list[Unit]:
    every = sorted((COURSE / "chapters").glob(f"*/*/instructor/*{SUFFIX}.cu"))
    if not selected:
        return [unit(path) for path in every]
    out = []
    for choice in selected:
        path = Path(choice)
        if path.suffix == ".cu":
            out.append(unit(path))
            continue
        found = [p for p in every if p.parent.parent.name == choice]
        if not found:
            raise CompileError(f"no instructor/*{SUFFIX}.cu in an exercise named {choice}")
        out += [unit(p) for p in found]
    return out


def nvcc() -> str:
    return tools.find("nvcc", required_for="to compile the course's kernels")


def _run(command: list[str]) -> str:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(f"{Path(command[0]).name} failed:\n{result.stderr.strip()}")
    return result.stdout


def architectures() -> list[int]:
    """The virtual architectures this nvcc compiles for (75, 80, ... 121 for nvcc 13.0)."""
    listed = _run([nvcc(), "--list-gpu-arch"]).split()
    return sorted(int(name.split("_")[1]) for name in listed if name.startswith("compute_"))


def _entries(text: str) -> dict[str, tuple[str, str]]:
    """Each entry of a PTX module: name -> (its directives, its body)."""
    return {name: (" ".join(directives.split()), body)
            for name, _params, directives, body in _ENTRY.findall(text)}


def _owner(unit_: Unit, entry: str) -> Kernel:
    owners = [k for k in unit_.kernels if entry.startswith(k.mangled)]
    if len(owners) != 1:
        raise CompileError(f"{unit_.readable.name}: the kernel {entry} is not declared in "
                           f"{unit_.header.name}")
    return owners[0]


def bodies(unit_: Unit, arch: int) -> dict[str, str]:
    """Each kernel's body in the PTX nvcc makes for compute_<arch>, as inline assembly."""
    text = _run([nvcc(), *unit_.flags, f"-arch=compute_{arch}", "-ptx", str(unit_.readable),
                 "-o", "-"])
    if re.search(r"^\.(?:visible\s+|weak\s+)?func\b", text, re.M):
        raise CompileError(f"{unit_.readable.name}: a device function was not inlined "
                           f"(compute_{arch}); the generated kernels could not call it")
    if re.search(r"^\.(?:global|const|extern)\b", text, re.M):
        raise CompileError(f"{unit_.readable.name}: module-scope variables are not supported "
                           f"(compute_{arch})")
    found = {}
    for entry, (_directives, body) in _entries(text).items():
        kernel = _owner(unit_, entry)
        found[kernel.name] = as_inline_assembly(body, f"{unit_.name}_{kernel.name}")
    missing = [k.name for k in unit_.kernels if k.name not in found]
    if missing:
        raise CompileError(f"no kernel {', '.join(missing)} in the PTX of {unit_.readable.name}")
    return found


def as_inline_assembly(body: str, label: str) -> str:
    """The body as the text of an asm statement, one instruction a line: registers and labels
    renamed so that nothing clashes with what nvcc declares around it, comments and blank
    lines dropped. The statement has no operands, only the memory clobber, so nvcc passes
    every % through as it stands.
    Shared arrays the kernel declares (demoted to the entry's scope) stay declared in the
    statement's block under their own names."""
    prefixes = sorted(set(_REG_DECL.findall(body)), key=len, reverse=True)
    if prefixes:
        body = re.sub(r"%(" + "|".join(prefixes) + r")(\d+|<)", r"%course_\1\2", body)
    body = re.sub(r"\$L__(\w+)", rf"$L__course_{label}_\1", body)
    lines = [" ".join(line.split()) for line in body.splitlines()]
    return "\n".join(["{"] + [line for line in lines if line and not line.startswith("//")] +
                     ["}"])


def _header_comment(unit_: Unit) -> list[str]:
    version = re.search(r"release [\d.]+, V[\d.]+", _run([nvcc(), "--version"]))
    return [
        f"// GENERATED by scripts/compile_course_kernels.py from the course's readable "
        f"{unit_.readable.name}",
        f"// (instructor/, course-only), with nvcc "
        f"{version.group(0) if version else '(unknown version)'}; do not edit.",
        "//",
        f"// The kernels {unit_.header.name} declares. Each body is the PTX nvcc makes from the",
        "// readable kernel for the GPU's architecture, from which ptxas makes the same machine",
        "// code, so the baselines hold as calibrated. The readable source is course-only: it",
        "// answers a graded exercise.",
    ]


def generated_source(unit_: Unit, archs: list[int] | None = None) -> str:
    archs = archs or architectures()
    with ThreadPoolExecutor(max_workers=2) as pool:
        per_arch = list(pool.map(lambda arch: bodies(unit_, arch), archs))
    out = _header_comment(unit_) + ["", f'#include "{unit_.header.name}"', ""]
    if unit_.namespace:
        out += [f"namespace {unit_.namespace} {{", ""]
    for kernel in unit_.kernels:
        # Runs of consecutive architectures with the same body: (first, last, body).
        groups: list[list] = []
        for arch, found in zip(archs, per_arch):
            if groups and groups[-1][2] == found[kernel.name]:
                groups[-1][1] = arch
            else:
                groups.append([arch, arch, found[kernel.name]])
        out += [f"{kernel.declaration} {{"]
        out += [f"  (void){p};" for p in kernel.parameters]
        for index, (first, last, body) in enumerate(reversed(groups)):
            if len(groups) > 1:
                if index == len(groups) - 1:
                    out.append("#else")
                else:
                    out.append(f"#{'if' if index == 0 else 'elif'} __CUDA_ARCH__ >= {first}0")
            out.append(f"  // PTX for compute_{first}" +
                       (f" to compute_{last}" if last != first else ""))
            out.append("  asm volatile(")
            out += ['      "' + line.replace("\\", "\\\\").replace('"', '\\"') + '\\n"'
                    for line in body.splitlines()]
            out += ['      :', '      :', '      : "memory");']
        if len(groups) > 1:
            out.append("#endif")
        out += ["}", ""]
    if unit_.namespace:
        out += [f"}}  // namespace {unit_.namespace}"]
    return "\n".join(out).rstrip("\n") + "\n"


def sass_instructions(obj: Path) -> dict[tuple[int, str], list[str]]:
    """(arch, function) -> the SASS instructions of an object file, without addresses,
    encodings and comments."""
    cuobjdump = tools.find("cuobjdump", required_for="to compare the machine code")
    kernels: dict[tuple[int, str], list[str]] = {}
    arch, current = 0, None
    for line in _run([cuobjdump, "-sass", str(obj)]).splitlines():
        header = re.match(r"\s*arch = sm_(\d+)", line)
        function = re.match(r"\s*Function : (\S+)", line)
        instruction = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s*(.*?)\s*;", line)
        if header:
            arch = int(header.group(1))
        elif function:
            current = kernels.setdefault((arch, function.group(1)), [])
        elif instruction and current is not None:
            current.append(instruction.group(1))
    return kernels


def sass(unit_: Unit, source: Path, archs: list[int], workdir: Path
         ) -> dict[tuple[int, str], list[str]]:
    """(arch, function) -> its SASS instructions (addresses, encodings and comments left out),
    then (arch, function + " resources") -> its resource usage, for source compiled as the
    course compiles device code."""
    obj = workdir / f"{unit_.name}_{source.parent.name}.o"
    gencode = [f"-gencode=arch=compute_{a},code=[sm_{a},compute_{a}]" for a in archs]
    _run([nvcc(), *unit_.flags, "-O3", "-lineinfo", *gencode, "-c", str(source), "-o",
          str(obj)])
    cuobjdump = tools.find("cuobjdump", required_for="to compare the machine code")
    kernels = sass_instructions(obj)
    arch, function_name = 0, None
    for line in _run([cuobjdump, "-res-usage", str(obj)]).splitlines():
        header = re.search(r"arch = sm_(\d+)", line)
        function = re.match(r"\s*Function (\S+):", line)
        if header:
            arch = int(header.group(1))
        elif function:
            function_name = function.group(1)
        elif function_name and "REG:" in line:
            kernels[(arch, function_name + " resources")] = line.split()
            function_name = None
    return kernels


def same_machine_code(unit_: Unit, archs: list[int] | None = None) -> list[str]:
    """What differs between the unit's readable kernels and its generated ones compiled for
    each of archs (default: every one nvcc knows): one line per kernel and architecture, none
    when all match."""
    archs = archs or architectures()
    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max_workers=2) as pool:
        readable, generated = pool.map(lambda source: sass(unit_, source, archs, Path(scratch)),
                                       (unit_.readable, unit_.generated))
    problems = []
    # The entries' directives (launch bounds: .maxntid, .minnctapersm), which the SASS does
    # not show, from the PTX of the first architecture.
    directives = [{name: d for name, (d, _body) in _entries(_run(
        [nvcc(), *unit_.flags, f"-arch=compute_{archs[0]}", "-ptx", str(source), "-o", "-"])
        ).items()} for source in (unit_.readable, unit_.generated)]
    if directives[0] != directives[1]:
        problems.append(f"{unit_.name}: the kernels' directives differ: {directives[0]} and "
                        f"{directives[1]}")
    for arch in archs:
        functions = {name for (a, name) in readable.keys() | generated.keys()
                     if a == arch and not name.endswith(" resources")}
        if not functions:
            problems.append(f"{unit_.name} sm_{arch}: no kernels")
        for name in sorted(functions):
            mine, theirs = readable.get((arch, name)), generated.get((arch, name))
            if mine is None or theirs is None:
                problems.append(f"{unit_.name} sm_{arch} {name}: only in the "
                                f"{'generated' if mine is None else 'readable'} file")
            elif mine != theirs:
                problems.append(f"{unit_.name} sm_{arch} {name}: the machine code differs "
                                f"({len(mine)} and {len(theirs)} instructions); run "
                                f"{Path(__file__).name} again")
            elif readable.get((arch, name + " resources")) != \
                    generated.get((arch, name + " resources")):
                problems.append(f"{unit_.name} sm_{arch} {name}: the resource usage differs: "
                                f"{readable.get((arch, name + ' resources'))} and "
                                f"{generated.get((arch, name + ' resources'))}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("units", nargs="*", metavar="UNIT",
                        help="an exercise name or an instructor/<stem>_kernels.cu (default: all)")
    parser.add_argument("--check", action="store_true",
                        help="compare the machine code of the two files of each unit")
    parser.add_argument("--arch", type=int, action="append",
                        help="with --check, compare on sm_<ARCH> only (repeatable; default: "
                             "every architecture nvcc knows)")
    args = parser.parse_args(argv)
    try:
        chosen = units(args.units)
        if args.check:
            problems = []
            for one in chosen:
                problems += same_machine_code(one, args.arch)
            for problem in problems:
                print(problem, file=sys.stderr)
            if not problems:
                print(f"the same machine code: {', '.join(u.name for u in chosen)}")
            return 1 if problems else 0
        archs = architectures()
        for one in chosen:
            one.generated.write_text(generated_source(one, archs), encoding="utf-8")
            print(f"wrote {one.generated.relative_to(COURSE)}")
    except CompileError as error:
        print(error, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
