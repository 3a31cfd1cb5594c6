"""Short table of grader reports: one row per report and exercise, with ratios."""

import json
import sys
from pathlib import Path

rows = []
for path in sys.argv[1:]:
    data = json.loads(Path(path).read_text())
    label = Path(path).stem
    for ex in data["exercises"]:
        ratios = []
        for stage in ex["stages"]:
            for m in stage.get("metrics", []):
                if m.get("ratio") is not None:
                    ratios.append(f"{m['name']}={m['ratio']:.2f}")
        tests = next((s for s in ex["stages"] if s["name"] == "tests"), None)
        cases = f"{tests['details'].get('passed', 0)}/{tests['details'].get('total', 0)}" \
            if tests and "total" in tests.get("details", {}) else "-"
        rows.append((label, ex["name"], ex["status"], cases, f"{ex['score']:g}/{ex['max_score']:g}",
                     " ".join(ratios)))
    rows.append((label, "TOTAL", "", "", f"{data['score']:g}/{data['max_score']:g}",
                 f"{data['percent']:.1f}%"))
widths = [max(len(r[i]) for r in rows) for i in range(6)] if rows else []
for r in rows:
    print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
