# `grade` exits 3 when its report is written but not final: a measurement could not be taken
# because another process kept the GPU busy (grader/stages/measured.py).
EXIT_INCOMPLETE = 3


class GraderError(Exception):
    """The grader itself cannot go on (bad input, missing tool). Printed as one line, exit 2."""


class ManifestError(GraderError):
    def __init__(self, path, field, problem):
        self.path = str(path)
        self.field = field
        self.problem = problem
        where = f"{self.path}: {field}: " if field else f"{self.path}: "
        super().__init__(f"malformed manifest {where}{problem}")
