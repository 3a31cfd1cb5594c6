"""Hidden test cases, for instructors: where they live and how reports keep them hidden.

An exercise may have an instructor-only test source, chapters/<chapter>/<name>/<name>
_hidden_test.cpp (HIDDEN_TEST_SUFFIX), compiled into its test binary only when the build is
configured with -Dhidden_tests=true (grade --hidden). Its cases live in GoogleTest suites whose
names start with "Hidden" (HIDDEN_SUITE_PREFIX, e.g. HiddenVectorAdd.OddSize, or an
instantiation HiddenLarge/VectorAdd.X/n_7). The student-facing template must leave such files
out: is_hidden_source() says which.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from grader.model import CaseStatus, ExerciseResult, StageName

HIDDEN_TEST_SUFFIX = "_hidden_test.cpp"
HIDDEN_SUITE_PREFIX = "Hidden"


def is_hidden_source(path: str | PurePath) -> bool:
    """True for an instructor-only test source, which templates and students never get."""
    return PurePath(path).name.endswith(HIDDEN_TEST_SUFFIX)
WITHHELD = "hidden case: details withheld"
_SEED_SHOWN = "<secret seed>"
# Whatever still names a hidden case or its source after the known names are replaced: a
# mangled or demangled test body in a backtrace, the source file in a compiler message.
_LEFTOVER = re.compile(r"\S*(?:" + HIDDEN_SUITE_PREFIX + r"|" + re.escape(HIDDEN_TEST_SUFFIX[:-4])
                       + r")\S*")


def is_hidden_case(name: str) -> bool:
    """A case of a Hidden* suite, or of an instantiation named Hidden* (Prefix/Suite.Test/p)."""
    suite = name.split(".", 1)[0]
    return any(part.startswith(HIDDEN_SUITE_PREFIX) for part in suite.split("/"))


def redact(result: ExerciseResult, secret_seed: int | None = None) -> ExerciseResult:
    """Renames hidden cases "hidden case 1..N", replaces their messages, removes their output
    and every mention of their names, counts them in the tests stage's details ("hidden":
    total, ran, passed), and with a secret removes the seed the programs got (which would
    replay the inputs). Changes `result` in place and returns it."""
    aliases: dict[str, str] = {}
    for stage in result.stages:
        for case in stage.cases:
            if is_hidden_case(case.name) and case.name not in aliases:
                aliases[case.name] = f"hidden case {len(aliases) + 1}"
    if not aliases and secret_seed is None:
        return result
    scrub = _Scrubber(aliases, secret_seed)
    result.message = scrub.text(result.message)
    for stage in result.stages:
        hidden = []
        for case in stage.cases:
            if case.name in aliases:
                hidden.append(case)
                case.name = aliases[case.name]
                case.message = "" if case.status == CaseStatus.PASSED else \
                    f"{case.status.replace('_', ' ')} ({WITHHELD})"
            else:
                case.message = scrub.text(case.message)
        stage.message = scrub.text(stage.message)
        stage.output = scrub.output(stage.output)
        for metric in stage.metrics:
            metric.message = scrub.text(metric.message)
        stage.details = stage.details.map(scrub.value)
        if hidden and stage.name == StageName.TESTS:
            passed = sum(c.status == CaseStatus.PASSED for c in hidden)
            ran = sum(c.status != CaseStatus.NOT_RUN for c in hidden)
            stage.details.hidden = {"total": len(hidden), "ran": ran, "passed": passed}
            stage.message += f" (hidden cases: {passed} of {len(hidden)} passed)"
    return result


class _Scrubber:
    def __init__(self, aliases: dict[str, str], secret_seed: int | None):
        self.aliases = aliases
        # Longest first: a name may be the start of another (n_1 and n_17).
        self.names = sorted(aliases, key=len, reverse=True)
        self.seed = str(secret_seed) if secret_seed is not None else None

    def text(self, text: str) -> str:
        return "\n".join(self._line(line) for line in text.split("\n")) if text else text

    def _line(self, line: str) -> str:
        if self.seed:
            line = line.replace(self.seed, _SEED_SHOWN)
        for name in self.names:
            at = line.find(name)
            if at >= 0:
                # What follows a name on its line may describe the case (", where
                # GetParam() = 7"), so it goes.
                return line[:at] + self.aliases[name]
        return _LEFTOVER.sub("<hidden>", line)

    def output(self, text: str) -> str:
        """A program's output without the lines a hidden case printed: GoogleTest frames each
        case with [ RUN ] and [ OK ] / [ FAILED ] / [ SKIPPED ]; a case that never ends runs to
        the next case or to the end."""
        if not text or not self.aliases:
            return self.text(text)
        kept, inside = [], None
        for line in text.split("\n"):
            if line.startswith("[ RUN      ] "):
                name = line[len("[ RUN      ] "):].strip()
                inside = name if name in self.aliases or is_hidden_case(name) else None
                if inside:
                    kept.append(f"[ RUN      ] {self.aliases.get(inside, 'a hidden case')}: "
                                "output withheld")
                    continue
            elif inside is not None:
                if line.startswith("[") and inside in line and not line.startswith("[ RUN"):
                    inside = None  # the case's last line; kept, the name replaced below
                elif line.startswith(("[----------]", "[==========]")):
                    inside = None
                else:
                    continue
            kept.append(self._line(line))
        return "\n".join(kept)

    def value(self, value):
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value
