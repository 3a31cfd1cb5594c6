"""The hardware counters the profile stage reads (grader/stages/profile.py), declared once.

Each Counter names the Nsight Compute metrics it needs (names as ncu spells them on compute
capability 9.0) and computes one number from their values, aggregated over the kernels of one
measurement's NVTX range (aggregate()). A manifest's `[profile] counters` names counters of
this registry; the manifest loader refuses any other name. Every counter also says which way is
better, what a difference from the reference means and what to try, for the report's sentence.
The roofline's metrics (ROOFLINE_METRICS) are collected for every range whatever the manifest
asks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

# The metric of a kernel's duration: it weighs the averages of a range's kernels.
DURATION = "gpu__time_duration.sum"
# A difference within this fraction of the value compared with is "same".
SAME_WITHIN = 0.10


@dataclass(frozen=True)
class Counter:
    """One number the profile stage reports per measurement. `compute` gets the range's
    aggregated metric values (a metric ncu did not report is missing) and returns None when it
    cannot say. `explain` is a sentence template with {student}, {other} (the value compared
    with, formatted with the unit), {against} ("the reference" or "the course baseline"),
    {times} (student / other) and {unit}; `hint` is what to try when the student's is worse.
    `slack`: an absolute difference at or under it counts as the same, for values near zero
    (a percentage point of stalls) where a relative one says nothing."""
    name: str
    title: str
    metrics: tuple[str, ...]
    compute: Callable[[dict], float | None]
    unit: str
    better: str  # "lower" | "higher"
    explain: str
    hint: str
    slack: float = 0.0


def _sum(values: dict, *names: str) -> float | None:
    """The sum of the named metrics, None when none of them was reported."""
    found = [values[n] for n in names if values.get(n) is not None]
    return sum(found) if found else None


def _ratio(values: dict, numerators: tuple[str, ...], denominators: tuple[str, ...]) \
        -> float | None:
    top, bottom = _sum(values, *numerators), _sum(values, *denominators)
    if top is None or not bottom:
        return None
    return top / bottom


def _one(name: str) -> Callable[[dict], float | None]:
    return lambda values: values.get(name)


SHARED_WAVEFRONTS = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                     "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
SHARED_INSTRUCTIONS = ("smsp__sass_inst_executed_op_shared_ld.sum",
                       "smsp__sass_inst_executed_op_shared_st.sum")
GLOBAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                  "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
GLOBAL_REQUESTS = ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
                   "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")
LOCAL_SECTORS = ("l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
SHARED_STALLS = ("smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
                 "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct")
THREAD_INSTRUCTIONS = "smsp__thread_inst_executed_per_inst_executed.ratio"

# The roofline of every range: FP32 operations (an FMA counts two), DRAM bytes read and
# written, and the kernels' time.
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
DRAM_BYTES = "dram__bytes.sum"
ROOFLINE_METRICS = (FADD, FMUL, FFMA, DRAM_BYTES, DURATION)


def roofline(values: dict) -> dict:
    """{"flops", "dram_bytes", "duration_s"} of a range's aggregated values (0.0 where ncu
    reported nothing); the duration is in seconds (the values are in ncu's base units)."""
    flops = (values.get(FADD) or 0.0) + (values.get(FMUL) or 0.0) + 2 * (values.get(FFMA) or 0.0)
    return {"flops": float(flops), "dram_bytes": float(values.get(DRAM_BYTES) or 0.0),
            "duration_s": float(values.get(DURATION) or 0.0) * 1e-9}


COUNTERS: dict[str, Counter] = {c.name: c for c in (
    Counter("shared_wavefronts_per_request", "shared-memory wavefronts per request",
            SHARED_WAVEFRONTS + SHARED_INSTRUCTIONS,
            lambda v: _ratio(v, SHARED_WAVEFRONTS, SHARED_INSTRUCTIONS),
            "wavefronts/request", "lower",
            "Your kernel needs {student} shared-memory wavefronts per request where {against} "
            "needs {other}: lanes of a warp hit the same bank, so each access is split into "
            "about {times} times as many passes",
            "pad the tile (tile[32][33]) or swizzle its index so that a warp's 32 accesses fall "
            "on 32 different banks"),
    Counter("global_sectors_per_request", "global-memory sectors per request",
            GLOBAL_SECTORS + GLOBAL_REQUESTS,
            lambda v: _ratio(v, GLOBAL_SECTORS, GLOBAL_REQUESTS),
            "sectors/request", "lower",
            "Your kernel moves {student} 32-byte sectors per global load or store where "
            "{against} moves {other}: a warp's accesses are spread over {times} times as many "
            "sectors, so most of each sector fetched goes unused",
            "let consecutive threads touch consecutive addresses (a structure of arrays, the "
            "thread index in the fastest-moving subscript), or stage the data through shared "
            "memory"),
    Counter("dram_throughput_pct", "DRAM throughput", ("dram__throughput.avg.pct_of_peak_"
                                                       "sustained_elapsed",),
            _one("dram__throughput.avg.pct_of_peak_sustained_elapsed"), "% of peak", "higher",
            "Your kernel keeps DRAM {student} busy where {against} keeps it {other}: a "
            "memory-bound kernel that leaves bandwidth unused waits on too few requests in "
            "flight or on wasted sectors",
            "coalesce the accesses, load wider (float4), and keep enough warps or independent "
            "loads per thread in flight", slack=2.0),
    Counter("achieved_occupancy_pct", "achieved occupancy",
            ("sm__warps_active.avg.pct_of_peak_sustained_active",),
            _one("sm__warps_active.avg.pct_of_peak_sustained_active"), "% of max warps",
            "higher",
            "Your kernel keeps {student} of an SM's warp slots busy where {against} keeps "
            "{other}: fewer warps leave less work to hide memory latency behind",
            "check the block size, the registers and shared memory per block that limit "
            "blocks per SM, and whether the grid has enough blocks to fill every SM",
            slack=2.0),
    Counter("theoretical_occupancy_pct", "theoretical occupancy",
            ("sm__maximum_warps_per_active_cycle_pct",),
            _one("sm__maximum_warps_per_active_cycle_pct"), "% of max warps", "higher",
            "Your launch allows {student} of an SM's warp slots where {against} allows "
            "{other}: registers, shared memory or the block size cap the blocks per SM",
            "use fewer registers (__launch_bounds__), less shared memory per block, or a "
            "block size that divides the SM's warp slots", slack=2.0),
    Counter("registers_per_thread", "registers per thread", ("launch__registers_per_thread",),
            _one("launch__registers_per_thread"), "registers", "lower",
            "Your kernel uses {student} registers per thread where {against} uses {other}: "
            "more registers per thread fit fewer warps on an SM",
            "keep fewer values live at once, or cap them with __launch_bounds__ (watch for "
            "spills)"),
    Counter("local_memory_sectors", "local-memory sectors (spills, local arrays)",
            LOCAL_SECTORS, lambda v: _sum(v, *LOCAL_SECTORS), "sectors", "lower",
            "Your kernel moves {student} sectors of local memory where {against} moves "
            "{other}: values spilled from registers or arrays indexed at run time live in "
            "slow, off-chip local memory",
            "index small arrays only with compile-time constants (unrolled loops), or keep "
            "fewer values live so nothing spills"),
    Counter("fma_pipe_pct", "FMA pipe utilisation",
            ("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",),
            _one("sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active"), "% of peak",
            "higher",
            "Your kernel keeps the FMA pipe {student} busy where {against} keeps it {other}: "
            "its warps spend the difference waiting for operands instead of computing",
            "compute more outputs per thread from values held in registers (register "
            "blocking), so each shared-memory load feeds several FMAs", slack=2.0),
    Counter("shared_stall_pct", "stalls on shared memory (MIO throttle + short scoreboard)",
            SHARED_STALLS, lambda v: _sum(v, *SHARED_STALLS), "% of active warps' cycles",
            "lower",
            "Your warps stall on shared memory for {student} of their cycles where {against}'s "
            "stall for {other}: the shared-memory pipe is saturated or its results are waited "
            "for right away",
            "load each shared value once into a register and reuse it, load wider (float4), "
            "and avoid bank conflicts", slack=2.0),
    Counter("constant_cache_miss_stall_pct", "stalls on constant-cache misses",
            ("smsp__warp_issue_stalled_imc_miss_per_warp_active.pct",),
            _one("smsp__warp_issue_stalled_imc_miss_per_warp_active.pct"),
            "% of active warps' cycles", "lower",
            "Your warps wait for the constant cache for {student} of their cycles where "
            "{against}'s wait for {other}: constant memory serves one address per warp at "
            "a time, so lanes reading different addresses serialise",
            "read __constant__ data only at an index every lane of the warp shares; read "
            "per-thread data through global memory (const __restrict__) instead", slack=1.0),
    Counter("warp_execution_efficiency_pct", "warp execution efficiency",
            (THREAD_INSTRUCTIONS,),
            lambda v: None if v.get(THREAD_INSTRUCTIONS) is None
            else 100.0 * v[THREAD_INSTRUCTIONS] / 32.0,
            "% of lanes active", "higher",
            "On average {student} of your warps' lanes do work per instruction where "
            "{against}'s do {other}: branches that split a warp run each side with the other "
            "lanes idle",
            "make the branch condition the same for a whole warp (branch on the warp index, "
            "or regroup the work so that neighbouring threads take the same path)", slack=2.0),
)}


def metrics_for(names) -> tuple[str, ...]:
    """Every metric the named counters need, then the roofline's, each once, in order."""
    out = [m for name in names for m in COUNTERS[name].metrics] + list(ROOFLINE_METRICS)
    return tuple(dict.fromkeys(out))


def aggregate(kernels: list[dict]) -> dict:
    """One value per metric over the kernels of a range: sums (.sum) add; launch__* metrics
    take the largest; averages, percentages and ratios are averaged weighted by each kernel's
    duration (equally where no kernel reports one). A metric no kernel reported is left out."""
    names = dict.fromkeys(name for kernel in kernels for name in kernel)
    out: dict[str, float] = {}
    for name in names:
        present = [(k[name], k.get(DURATION) or 0.0) for k in kernels
                   if k.get(name) is not None]
        if not present:
            continue
        if name.startswith("launch__"):
            out[name] = max(value for value, _ in present)
        elif name.endswith(".sum") and ".pct" not in name and ".ratio" not in name:
            out[name] = sum(value for value, _ in present)
        else:
            weights = sum(weight for _, weight in present)
            out[name] = (sum(value * weight for value, weight in present) / weights
                         if weights > 0 else sum(value for value, _ in present) / len(present))
    return out


def compute(names, values: dict) -> dict:
    """{counter: value or None} for the named counters, from a range's aggregated values."""
    out = {}
    for name in names:
        try:
            value = COUNTERS[name].compute(values)
        except (TypeError, ZeroDivisionError):
            value = None
        out[name] = None if value is None else float(value)
    return out


def verdict(counter: Counter, student: float | None, other: float | None) -> str:
    """"same" within SAME_WITHIN of `other` (or within the counter's slack), else "better" or
    "worse" by the counter's direction; "unknown" when either value is missing."""
    if student is None or other is None:
        return "unknown"
    difference = abs(student - other)
    if difference <= counter.slack or difference <= SAME_WITHIN * abs(other):
        return "same"
    lower = student < other
    return "better" if lower == (counter.better == "lower") else "worse"


def number(value: float | None, unit: str = "") -> str:
    """A value as the report's sentences and the terminal show it: percentages with a % sign,
    large counts with a magnitude, ratios to one decimal."""
    if value is None:
        return "-"
    if unit.startswith("%"):
        return f"{value:.1f}%"
    magnitude = abs(value)
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e4, "k")):
        if magnitude >= limit:
            return f"{value / limit:.1f}{suffix}"
    if float(value).is_integer():
        return f"{value:.0f}" if magnitude >= 100 else f"{value:.1f}"
    return f"{value:.1f}" if magnitude >= 1 else f"{value:.2f}"


def sentence(counter: Counter, result: str, student: float | None, other: float | None,
             against: str) -> str:
    """What the comparison means, for the report: for a worse value the counter's
    explanation and what to try; otherwise one plain line."""
    mine, theirs = number(student, counter.unit), number(other, counter.unit)
    if result == "unknown":
        return (f"No {counter.title} to compare: "
                + ("ncu reported none for your kernels." if student is None
                   else "neither the reference nor the course baseline has a value."))
    if result == "same":
        return f"Your {counter.title} ({mine}) is close to {against}'s ({theirs})."
    if result == "better":
        return f"Your {counter.title} ({mine}) is better than {against}'s ({theirs})."
    times = f"{student / other:.1f}" if other else "many"
    if counter.better == "higher" and student:
        times = f"{other / student:.1f}"
    text = counter.explain.format(student=mine, other=theirs, against=against, times=times,
                                  unit=counter.unit)
    return f"{text}; {counter.hint}."
