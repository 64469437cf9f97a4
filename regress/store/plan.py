"""ci/history plan: what each series of a machine can see (regress/stats/plan.py
holds the arithmetic). Per benchmark: its run-to-run noise from the
history's series (regress/store/noise.py, as compare --history reads it), its
paired noise from an A/A verdict (compare --run BENCH BENCH --json: the
noise its interval implies) or the nightly A/A ledger's, else the prior;
then the smallest change two nightly runs flag, the smallest change the
gate's paired rounds find with 95% power, and the rounds a given change
needs."""
import json
import os

from regress.load import results
from regress.stats import decide, plan
from regress.stats import noise as noise_mod
from regress.store import noise as store_noise
from regress.store.runs import HistoryError

AA_LEDGER = "aa-ledger.jsonl"


def paired_from_doc(path):
    """{name: effective noise} of a paired A/A verdict file; HistoryError otherwise."""
    try:
        doc = json.loads(results.read_text(path))
    except (results.DocumentError, ValueError) as e:
        raise HistoryError("--noise %s: %s" % (path, e))
    if not isinstance(doc, dict) or doc.get("mode") != "paired" or not isinstance(doc.get("benchmarks"), list):
        raise HistoryError("--noise %s: not the verdicts of a paired comparison (compare --run --json)" % path)
    seq = doc.get("sequential") or {}
    level = seq.get("level_per_look") or (doc.get("settings") or {}).get("level") or 0.9
    out = {}
    for r in doc["benchmarks"]:
        if isinstance(r, dict) and isinstance(r.get("name"), str):
            v = plan.effective_noise(r, level, bool(seq))
            if v:
                out[r["name"]] = v
    return out


def paired_from_ledger(directory, machine):
    """{name: effective noise} of the machine's newest A/A night that kept them."""
    path = os.path.join(directory, AA_LEDGER)
    found = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if isinstance(e, dict) and e.get("machine") == machine and isinstance(e.get("noise"), dict):
                    found = {k: float(v) for k, v in e["noise"].items() if isinstance(v, (int, float)) and v > 0}
    return found


def plan_rows(h, directory, machine, delta, rounds, looks, paired=None, floors=None, alpha=decide.ALPHA):
    """One dict per benchmark of the machine's series: its noises (with their
    sources) and what they let the comparator see."""
    runs = h.runs(machine)
    if not runs:
        raise HistoryError("machine %s has no runs" % machine)
    names = sorted(h.names(machine))
    info = h.benchmark_info(machine)
    try:
        run_noise, tail, _, _ = store_noise.from_history(directory, runs[-1]["context"], names, floors=floors)
    except noise_mod.NoiseError as e:
        raise HistoryError(str(e))
    source = "--noise" if paired is not None else "the nightly A/A"
    paired = paired if paired is not None else paired_from_ledger(directory, machine)
    alpha_look = alpha / len(looks)
    out = []
    for name in names:
        family, device = info.get(name, (None, None))
        device = device if device in ("cpu", "gpu") else "cpu"
        floor = decide.floor_for(floors or {}, "paired", family, device)
        files_floor = decide.floor_for(floors or {}, "files", family, device)
        rn, rn_src = run_noise.get(name, (noise_mod.prior(device, family), "prior"))
        pn, pn_src = (paired[name], source) if name in paired else (noise_mod.prior(device, family), "prior")
        out.append({"name": name, "family": family, "device": device,
                    "run_noise": rn, "run_noise_source": rn_src, "paired_noise": pn, "paired_noise_source": pn_src,
                    "files_detectable": plan.files_detectable(rn, files_floor, decide.RUN_MULTIPLES[device], tail),
                    "paired_detectable": plan.paired_detectable(pn, rounds, floor, alpha_look),
                    "rounds_for_delta": plan.rounds_for(delta, pn, floor, alpha_look)})
    return out
