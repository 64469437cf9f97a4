"""What a comparison decides with: the settings, built once from the command
line (Settings.make), and the compared metric as the files declare it."""
import dataclasses
import re
from dataclasses import dataclass, field
from typing import Optional

from regress.stats import decide
from regress.stats import noise as noise_mod
from regress.stats.decide import ALPHA, DEFAULT_MULTIPLE, LEVEL, RUN_MULTIPLES


@dataclass(frozen=True)
class Settings:
    """The comparison's settings. The noise model is an object of its own:
    --history and the notes fill it while the inputs are read."""
    mode: str                                    # "paired" or "files"
    alpha: float = ALPHA
    level: float = LEVEL
    floors: dict = field(default_factory=dict)   # (family or None, device) -> fraction
    multiple: float = 1.0
    metric: Optional[str] = None                 # --metric; None: the time per iteration
    noise: dict = field(default_factory=dict)    # name -> noise from an earlier paired A/A comparison
    noise_given: bool = False
    noise_model: noise_mod.Model = field(default_factory=noise_mod.Model)
    history: Optional[str] = None                # --history DIR
    correction: str = "holm"                     # "holm" or "bh"
    family: Optional[int] = None                 # multiple-comparison family size, when larger than the rows
    rejected: int = 0                            # rows of the family earlier looks found SLOWER/FASTER
    delta: Optional[float] = None                # --delta: the change a sequential comparison is to find
    results_may_differ: bool = False             # --results-may-differ: fractional results need not match
    filter: Optional[re.Pattern] = None          # --filter
    scale_new: Optional[float] = None            # --scale-new F: NEW's times x F
    paired_test: str = "wsr"                     # "wsr" or "t" (a sequential comparison's early looks)
    across: bool = False                         # --across-hardware: fractions of each run's own ceilings

    @classmethod
    def make(cls, mode, alpha=ALPHA, floors=None, multiple=None, metric=None, noise=None, history=None,
             results_may_differ=False, filter=None, scale_new=None, across=False):
        """The settings of one comparison; multiple defaults by the mode, and
        the noise model starts from the --noise values."""
        model = noise_mod.Model()
        model.add_paired(noise or {})
        return cls(mode, alpha=alpha, floors=dict(floors or {}),
                   multiple=DEFAULT_MULTIPLE[mode] if multiple is None else multiple, metric=metric,
                   noise=noise or {}, noise_given=noise is not None, noise_model=model, history=history,
                   results_may_differ=results_may_differ, filter=filter, scale_new=scale_new, across=across)

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def correction_name(self):
        return "Holm" if self.correction == "holm" else "Benjamini-Hochberg"

    def floor(self, family, device):
        """The threshold's floor: the smallest change SLOWER/FASTER may name."""
        return decide.floor_for(self.floors, self.mode, family, device)

    def same_floor(self, family, device):
        """The floor of SAME: the smallest change the user cares about."""
        return decide.same_floor_for(self.floors, family, device)

    def threshold_rule(self):
        if self.mode == "paired":
            return "max(floor, %g x the noise of one run, measured over the rounds)" % self.multiple
        return ("max(floor, %g x the spread of the repetitions); SLOWER/FASTER also need the interval beyond "
                "%g (GPU) or %g (CPU) x the run-to-run noise (%s: the 'run noise' column), what two processes' "
                "offsets can give" % (self.multiple, RUN_MULTIPLES["gpu"], RUN_MULTIPLES["cpu"],
                                      "the prior" if self.across else "--noise, --history or the prior"))


# The metric across hardware: each entry's declared rate over its own run's
# ceiling of the rate's kind (regress/load/ceilings.py), higher is better.
FRACTION_OF_CEILING = "fraction_of_ceiling"


@dataclass(frozen=True)
class Metric:
    """The compared metric: its counter (None: the time per iteration),
    which way is better, and its unit ("s" for the time)."""
    name: Optional[str]
    higher_better: bool
    unit: str

    def inverted(self):
        """Whether the values are of the time it implies (a rate: 1/rate)."""
        return bool(self.name) and self.higher_better

    def describe(self):
        if self.name == FRACTION_OF_CEILING:
            return ("fraction of ceiling: each entry's rate over its own run's ceiling of the rate's kind, device "
                    "and source (copy bandwidth, the library GEMM; higher is better), never its time; changes are "
                    "of its inverse: + is slower, a smaller share of its machine's ceiling")
        if self.name and self.name != "real_time":
            return "%s (%s, %s is better%s)" % (
                self.name, self.unit or "no unit", "higher" if self.higher_better else "lower",
                "; changes are of the time it implies, 1/%s: + is slower" % self.name if self.higher_better else "")
        return "time per iteration (real_time; manual time in parbench), lower is better"
