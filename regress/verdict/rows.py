"""One benchmark's verdict as a record (Row), and its entry in the verdict
JSON (Row.to_json).

The JSON's keys come in the order the verdict's stages fill them in: the
pairing (name, and a verdict with its reason when the benchmark needs no
statistics), the statistics, the rounds of a sequential look, the control
series. A reason stands where its first part was written: the stage that
wrote it is kept (reason_stage), so a document reads the same as ever."""
from dataclasses import dataclass, field
from typing import Optional

# The stage that wrote a row's first reason: where "reason" stands in its JSON.
WITH_VERDICT = "verdict"        # right after the verdict: decided without statistics, or too few values
WITH_STATISTICS = "statistics"  # after p, before the verdict
WITH_SAME_CODE = "same code"    # after same_code, before the verdict: a same-code row without another reason
WITH_RESULTS = "results"        # after the rate: --results-may-differ's note
WITH_ROUNDS = "rounds"          # after the rounds of a sequential look
WITH_CONTROLS = "controls"      # after the control series

# Most urgent first: the order of the summary and of the table's groups.
VERDICTS = ("ERROR", "SLOWER", "NOT_SAME_WORK", "UNRELIABLE", "MISSING", "NEW",
            "AMBIGUOUS", "FASTER", "SAME")
GATING = ("ERROR", "SLOWER")


@dataclass(frozen=True)
class RateChange:
    """The declared rate's medians on both sides (the change mirrors the time's)."""
    counter: str
    base: float
    new: float

    def to_json(self):
        return {"counter": self.counter, "base": self.base, "new": self.new, "change": self.new / self.base - 1.0}


@dataclass(frozen=True)
class Control:
    """How far the control series (vendor libraries) moved: median change over n."""
    change: float
    n: int
    libraries: list

    def to_json(self):
        return {"change": self.change, "n": self.n, "libraries": self.libraries}


@dataclass
class Row:
    """One benchmark's verdict and what it rests on. Changes, intervals,
    thresholds and noise are fractions of the time; counts are the values
    per side (repetitions, or rounds: paired, both the same)."""
    name: str
    family: str
    device: str
    library: Optional[str] = None
    across: Optional[dict] = None                 # across hardware: the ceiling kind and each side's ceiling
    verdict: Optional[str] = None
    reasons: list = field(default_factory=list)   # joined with "; " when written
    reason_stage: Optional[str] = None            # the stage of the first reason (module docstring)
    results_differ: list = field(default_factory=list)
    n_base: Optional[int] = None                  # None: decided without statistics
    n_new: Optional[int] = None
    base: Optional[float] = None                  # medians of the metric per side
    new: Optional[float] = None
    threshold: Optional[float] = None
    floor: Optional[float] = None                 # SAME needs the interval inside +-floor
    noise: Optional[float] = None
    run_noise: Optional[float] = None             # None: not known (paired, no --noise)
    run_noise_source: Optional[str] = None
    margin: Optional[float] = None                # two files: what process offsets can give
    code: Optional[str] = None                    # "same" / "changed": the code and library versions
    change: Optional[float] = None                # None: too few values to decide
    ci: list = field(default_factory=lambda: [None, None])
    p: Optional[float] = None                     # after the multiple-comparison correction
    same_code: bool = False
    rate: Optional[RateChange] = None
    rounds: Optional[int] = None                  # sequential: the look that decided it
    stopped: bool = False                         # sequential --delta: stopped for futility before the cap
    round_mode: Optional[str] = None              # paired: "duet" or "interleaved", how its rounds ran
    instructions: Optional[dict] = None           # --instrument: the instruction change (regress/verdict/instrument.py)
    control: Optional[Control] = None
    controls_moved: bool = False

    @property
    def reason(self):
        return "; ".join(self.reasons) or None

    def add_reason(self, text, stage):
        if not self.reasons:
            self.reason_stage = stage
        self.reasons.append(text)

    def prefix_reason(self, text, stage):
        if not self.reasons:
            self.reason_stage = stage
        self.reasons.insert(0, text)

    def set_reason(self, text, stage):
        """Replaces the reasons; the reason keeps its place when it had one."""
        if not self.reasons:
            self.reason_stage = stage
        self.reasons[:] = [text]

    def decide(self, verdict, reason):
        """A verdict without statistics, with its reason."""
        self.verdict = verdict
        self.add_reason(reason, WITH_VERDICT)

    def gates(self):
        """Whether it fails the comparison: SLOWER (not with the same code on
        both sides) or ERROR."""
        return self.verdict in GATING and not self.same_code

    def _put_reason(self, d, stage):
        if self.reasons and self.reason_stage == stage:
            d["reason"] = self.reason

    def to_json(self):
        d = {"name": self.name, "family": self.family, "device": self.device}
        if self.library:
            d["library"] = self.library
        if self.across is not None:
            d["across_hardware"] = dict(self.across)
        if self.n_base is None:
            d["verdict"] = self.verdict
            self._put_reason(d, WITH_VERDICT)
        else:
            self._statistics_json(d)
        self._put_reason(d, WITH_RESULTS)
        if self.rounds is not None:
            d["rounds"] = self.rounds
        self._put_reason(d, WITH_ROUNDS)
        if self.control is not None:
            d["control"] = self.control.to_json()
            if self.controls_moved:
                d["controls_moved"] = True
        self._put_reason(d, WITH_CONTROLS)
        return d

    def _statistics_json(self, d):
        if self.results_differ:
            d["results_differ"] = self.results_differ
        d.update(n_base=self.n_base, n_new=self.n_new, base=self.base, new=self.new, threshold=self.threshold,
                 floor=self.floor, noise=self.noise)
        if self.round_mode:
            d["round_mode"] = self.round_mode
        if self.run_noise is not None:
            d.update(run_noise=self.run_noise, run_noise_source=self.run_noise_source)
        if self.margin is not None:
            d["margin"] = self.margin
        if self.code:
            d["code"] = self.code
        if self.change is None:
            d["verdict"] = self.verdict
            self._put_reason(d, WITH_VERDICT)
            d.update(change=None, ci=self.ci, p=None)
            return
        d.update(change=self.change, ci=self.ci, p=self.p)
        self._put_reason(d, WITH_STATISTICS)
        if self.same_code:
            d["same_code"] = True
        self._put_reason(d, WITH_SAME_CODE)
        d["verdict"] = self.verdict
        if self.rate is not None:
            d["rate"] = self.rate.to_json()
        if self.instructions is not None:
            d["instructions"] = dict(self.instructions)
