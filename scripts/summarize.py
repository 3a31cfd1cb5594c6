"""Short table of grader reports: one row per report and exercise, with ratios.

    python3 scripts/summarize.py REPORT.json...
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grader.errors import GraderError  # noqa: E402
from grader.model import Report  # noqa: E402

rows = []
for path in sys.argv[1:]:
    try:
        report = Report.load(Path(path))
    except GraderError as error:
        sys.exit(f"summarize: {error}")
    label = Path(path).stem
    for ex in report.exercises:
        ratios = [f"{m.name}={m.ratio:.2f}" for stage in ex.stages for m in stage.metrics
                  if m.ratio is not None]
        tests = ex.stage("tests")
        cases = f"{tests.details.get('passed', 0)}/{tests.details.get('total', 0)}" \
            if tests and "total" in tests.details else "-"
        rows.append((label, ex.name, ex.status, cases, f"{ex.score:g}/{ex.max_score:g}",
                     " ".join(ratios)))
    # The same rounding as the report's JSON totals.
    rows.append((label, "TOTAL", "", "", f"{round(report.score, 3):g}/"
                 f"{round(report.max_score, 3):g}", f"{round(report.percent, 2):.1f}%"))
widths = [max(len(r[i]) for r in rows) for i in range(6)] if rows else []
for r in rows:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
