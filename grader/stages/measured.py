"""A measurement alone on the GPU: the grader's exclusive turn (grader/gpu_turns.py), foreign
load looked for before and after (grader/gpu_load.py), and the measurement taken again when it
was disturbed. A measurement that stays disturbed comes back with its Disturbance, and its
metrics are reported as not measured (never as a low score); under --allow-shared-gpu it comes
back as it is, marked. A result whose problem was inferred from timing alone (`suspect`) is
taken again, and stands only when a second undisturbed measurement shows it too.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from grader import gpu_turns
from grader.gpu_load import Disturbance, LoadWatch

T = TypeVar("T")

ATTEMPTS = 3           # disturbed measurements before giving up
FIRST_WAIT_S = 20.0    # for a busy GPU to become free, before the first measurement given up
LATER_WAIT_S = 3.0     # once a measurement of this grade was given up (the load stays)
POLL_S = 1.0


@dataclass
class Measured(Generic[T]):
    result: T | None               # None: never run, the GPU stayed busy
    disturbance: Disturbance | None = None
    attempts: int = 1
    shared: bool = False            # --allow-shared-gpu: kept though disturbed
    confirmed: bool = False         # a suspect result seen twice undisturbed

    @property
    def not_measured(self) -> bool:
        return self.disturbance is not None and not self.shared


class Alone:
    """Runs measurements alone on one GPU for one grade."""

    def __init__(self, turns: gpu_turns.GpuTurns | None, watch: LoadWatch | None,
                 progress: Callable[[str], None] | None = None, allow_shared: bool = False,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.turns = turns
        self.watch = watch
        self.progress = progress or (lambda _message: None)
        self.allow_shared = allow_shared
        self.sleep = sleep
        self.clock = clock
        self.gave_up = 0   # measurements reported as not measured in this grade
        self.disturbed = 0  # measurements taken again

    def measure(self, what: str, run: Callable[[], T],
                suspect: Callable[[T], bool] = lambda _result: False) -> Measured[T]:
        disturbed_runs = 0
        suspected = 0
        last: T | None = None
        last_why: Disturbance | None = None
        while disturbed_runs < ATTEMPTS:
            with gpu_turns.maybe(self.turns, what, alone=True):
                why = None if self.allow_shared else self._wait_until_free(what)
                if why is None:
                    if self.watch is not None:
                        self.watch.start()
                    last = run()
                    why = self.watch.disturbance() if self.watch is not None else None
            if why is None:
                if suspect(last) and suspected == 0:
                    suspected = 1
                    self.progress(f"{what}: its timing suggests work outside the stream; "
                                  "measuring again before saying so")
                    continue
                return Measured(last, None, disturbed_runs + suspected + 1,
                                confirmed=suspected > 0 and suspect(last))
            if self.allow_shared and last is not None:
                return Measured(last, why, disturbed_runs + 1, shared=True)
            disturbed_runs += 1
            last_why = why
            self.disturbed += 1
            if disturbed_runs < ATTEMPTS:
                self.progress(f"{what}: {why.describe()}; measuring again "
                              f"({disturbed_runs + 1}/{ATTEMPTS})")
        self.gave_up += 1
        self.progress(f"{what}: not measured: {last_why.describe()}")
        return Measured(None, last_why, disturbed_runs)

    def _wait_until_free(self, what: str) -> Disturbance | None:
        """None once nothing else uses the GPU; the disturbance when it stays busy."""
        if self.watch is None:
            return None
        busy = self.watch.busy_now()
        if busy is None:
            return None
        patience = LATER_WAIT_S if self.gave_up else FIRST_WAIT_S
        self.progress(f"{busy.describe()}: waiting up to {patience:.0f} s for it before {what}")
        deadline = self.clock() + patience
        while busy is not None and self.clock() < deadline:
            self.sleep(POLL_S)
            busy = self.watch.busy_now()
        return busy
