"""The SOR family's pictures from a `sor-solve` folder (DIR/field.npy and
DIR/residuals.json): the converged field as a heatmap beside its residual
every K sweeps. plots/plot --sor-field DIR puts them in the report's SOR
section."""
import json
import os

from plots.report_draw import legend, plt

MAX_CELLS = 800  # the heatmap shows at most this many points a side (every k-th point)


class FieldError(Exception):
    """A folder that is not a readable sor-solve output; one line."""


def load(folder):
    """(meta dict, field array) of a sor-solve folder, or FieldError."""
    import numpy as np

    try:
        with open(os.path.join(folder, "residuals.json"), encoding="utf-8") as f:
            meta = json.load(f)
        field = np.load(os.path.join(folder, "field.npy"), allow_pickle=False)
    except (OSError, ValueError) as e:
        raise FieldError("%s: not a sor-solve folder (%s)" % (folder, e))
    if not isinstance(meta, dict) or meta.get("parbench_sor_solve") != 1:
        raise FieldError("%s: residuals.json was not written by sor-solve" % folder)
    if field.ndim != 2 or field.shape != (meta.get("M"), meta.get("N")):
        raise FieldError("%s: field.npy has shape %s, residuals.json says %sx%s"
                         % (folder, field.shape, meta.get("M"), meta.get("N")))
    return meta, field


def sweeps_of(meta):
    """The sweep after which each residual was taken: every K sweeps, and the
    last one wherever the run stopped."""
    every, total, n = meta["every"], meta["sweeps"], len(meta["residuals"])
    return [min(every * (i + 1), total) for i in range(n)]


def draw(folder, cv):
    """Adds one figure (heatmap + residual curve) to the Canvas; FieldError on bad input."""
    meta, field = load(folder)
    pyplot = plt()
    fig, (left, right) = pyplot.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [1.2, 1]})
    step = max(1, -(-max(field.shape) // MAX_CELLS))
    shown = field[::step, ::step]
    width_x = meta["h1"] * (meta["M"] - 1)
    width_y = meta["h2"] * (meta["N"] - 1)
    # Rows are x, columns y: transposed so that x runs left to right, y upwards.
    im = left.imshow(shown.T, origin="lower", extent=[0, width_x, 0, width_y], cmap="inferno", aspect="auto",
                     interpolation="nearest")
    fig.colorbar(im, ax=left, label="u")
    left.set_xlabel("x")
    left.set_ylabel("y")
    left.set_title("field after %d sweeps%s" % (meta["sweeps"], "" if step == 1 else " (every %d-th point)" % step),
                   fontsize=9)
    sweeps = sweeps_of(meta)
    values = [r for r in meta["residuals"]]
    pts = [(s, r) for s, r in zip(sweeps, values) if r is not None and r > 0]
    if pts:
        right.semilogy([s for s, _ in pts], [r for _, r in pts], "-", color="#1f77b4", label="residual")
    right.axhline(meta["tolerance"], color="grey", ls="--", lw=1, label="tolerance")
    right.set_xlabel("sweeps")
    right.set_ylabel("residual (RMS of the Gauss-Seidel correction)")
    right.grid(True, which="both", alpha=0.3)
    legend(right, 2)
    state = "converged" if meta["converged"] else "did NOT converge"
    last = values[-1] if values else None
    title = ("SOR %s field %dx%d, omega %g: %s in %d sweeps (residual %s)"
             % (meta["field"], meta["M"], meta["N"], meta["omega"], state, meta["sweeps"],
                "%.3g" % last if last is not None else "not finite"))
    if not meta["converged"]:
        cv.finding("warning", "%s: the SOR solve %s (omega %g)" % (folder, state, meta["omega"]))
    cv.save(fig, cv.name("field", os.path.basename(os.path.normpath(folder))), title, "SOR")
