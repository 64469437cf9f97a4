#!/usr/bin/env python3
"""The k-means family's peers, from the same points and first centroids as
bench (a folder written by `kmeans-inputs`):

  sklearn.Lloyd  scikit-learn's KMeans(algorithm="lloyd", init=the centroids,
                 n_init=1, tol=0, max_iter=ITER) on the CPU, all of its
                 OpenMP threads unless OMP_NUM_THREADS says otherwise; its
                 time per iteration is the fit's wall time over its iterations
                 (the fit's own checks and the final assignment included);
  PyTorch.GEMM   the GEMM form of an iteration on the GPU, in the inputs'
                 type (float64, or float32 for `kmeans-inputs --type=f32`,
                 PyTorch's default full-FP32 matmul):
                 |x|^2 - 2 x c^T + |c|^2, argmin, then the new centroids by
                 index_add_ (an empty cluster keeps its centroid), ITER
                 iterations timed with CUDA events after one warm-up run;
  PyTorch.GEMM.TF32  (--peers torch-tf32, float32 inputs only) the same
                 with PyTorch's matmul allowed TF32 on the tensor cores.

Writes Google Benchmark JSON in parbench's schema 1, entries named like
bench's (`KMeans/sklearn.Lloyd/cfg:custom/dist:uniform/N:.../D:.../K:...`,
counters seconds_per_iteration, lloyd_iterations, inertia), so the report
and ci/table read it beside a bench run:

    ./build/default/kmeans-inputs --shape=4000000x16x16 --out=km-in
    python3 peers/kmeans_peers.py km-in --iterations=10 --out=kmeans-peers.json

Exit status: 0; 2 on a bad argument, unreadable inputs, or no peer that can
run (scikit-learn or PyTorch with a GPU missing): one line on stderr.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time


def fail(msg):
    print("kmeans_peers: " + msg, file=sys.stderr)
    sys.exit(2)


def load_inputs(folder):
    try:
        import numpy as np
    except ImportError:
        fail("NumPy is not installed (Debian: apt-get install python3-numpy)")
    try:
        with open(os.path.join(folder, "problem.json"), encoding="utf-8") as f:
            prob = json.load(f)
        x = np.load(os.path.join(folder, "points.npy"), allow_pickle=False)
        c = np.load(os.path.join(folder, "init.npy"), allow_pickle=False)
    except (OSError, ValueError) as e:
        fail("%s: not a kmeans-inputs folder (%s)" % (folder, e))
    if x.shape != (prob.get("N"), prob.get("D")) or c.shape != (prob.get("K"), prob.get("D")):
        fail("%s: the arrays' shapes do not match problem.json" % folder)
    return prob, x, c


def entry(name, rep, reps, seconds, iterations, inertia, aggregate=False):
    e = {"name": name + ("_median" if aggregate else ""), "family_index": 0, "per_family_instance_index": 0,
         "run_name": name, "run_type": "aggregate" if aggregate else "iteration", "repetitions": reps,
         "threads": 1}
    if aggregate:
        e.update(aggregate_name="median", aggregate_unit="time")
    else:
        e["repetition_index"] = rep
    e.update(iterations=1, real_time=seconds * iterations * 1e3, cpu_time=seconds * iterations * 1e3,
             time_unit="ms", seconds_per_iteration=seconds, lloyd_iterations=float(iterations),
             inertia=inertia, parbench={"disposition": "passed", "role": "variant",
                                        "device": "gpu" if "PyTorch" in name else "cpu"})
    return e


def run_sklearn(x, c, iterations, reps):
    try:
        from sklearn.cluster import KMeans
    except ImportError:
        return None, "scikit-learn is not installed"
    times, last = [], None
    for _ in range(reps):
        km = KMeans(n_clusters=c.shape[0], init=c, n_init=1, max_iter=iterations, tol=0.0, algorithm="lloyd")
        t0 = time.perf_counter()
        km.fit(x)
        elapsed = time.perf_counter() - t0
        times.append(elapsed / max(1, km.n_iter_))
        last = km
    return (times, last.n_iter_, float(last.inertia_)), None


def run_torch(x, c, iterations, reps, tf32=False):
    try:
        import torch
    except ImportError:
        return None, "PyTorch is not installed"
    if not torch.cuda.is_available():
        return None, "no CUDA GPU visible to PyTorch"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    dev = torch.device("cuda")
    X = torch.from_numpy(x).to(dev)
    xx = (X * X).sum(1, keepdim=True)
    k = c.shape[0]

    def lloyd(C):
        for _ in range(iterations):
            d = xx - 2.0 * (X @ C.T) + (C * C).sum(1)
            best, assign = d.min(1)
            sums = torch.zeros_like(C).index_add_(0, assign, X)
            counts = torch.bincount(assign, minlength=k).to(C.dtype).unsqueeze(1)
            C = torch.where(counts > 0, sums / counts.clamp(min=1), C)
        return C, best

    lloyd(torch.from_numpy(c).to(dev))  # warm-up
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        C0 = torch.from_numpy(c).to(dev)
        torch.cuda.synchronize()
        start.record()
        C, best = lloyd(C0)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3 / iterations)
    return (times, iterations, float(best.clamp(min=0).sum().item())), None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", help="a folder written by kmeans-inputs")
    ap.add_argument("--iterations", type=int, default=10, help="Lloyd iterations (default 10)")
    ap.add_argument("--repetitions", type=int, default=3)
    ap.add_argument("--peers", default="sklearn,torch",
                    help="sklearn, torch, torch-tf32 (f32 inputs), comma-separated (default sklearn,torch)")
    ap.add_argument("--out", required=True, help="JSON file to write")
    a = ap.parse_args(argv)
    if a.iterations < 1 or a.repetitions < 1:
        fail("--iterations and --repetitions must be >= 1")
    peers = a.peers.split(",")
    names = {"sklearn": "sklearn.Lloyd", "torch": "PyTorch.GEMM", "torch-tf32": "PyTorch.GEMM.TF32"}
    if not peers or any(p not in names for p in peers):
        fail("--peers takes sklearn, torch, torch-tf32, comma-separated")
    prob, x, c = load_inputs(a.inputs)
    single = prob.get("type", "f64") == "f32"
    if "torch-tf32" in peers and not single:
        fail("--peers torch-tf32: inputs of type f32 only (kmeans-inputs --type=f32)")
    if single:
        x, c = x.astype("float32"), c.astype("float32")
    # The run name as bench writes it: type only where it is f32.
    typed = "type:f32/" if single else ""
    shape = "cfg:custom/%sdist:%s/N:%d/D:%d/K:%d" % (typed, prob["dist"], prob["N"], prob["D"], prob["K"])
    entries, ran, why = [], [], []
    for peer in peers:
        if peer == "sklearn":
            result, reason = run_sklearn(x, c, a.iterations, a.repetitions)
        else:
            result, reason = run_torch(x, c, a.iterations, a.repetitions, tf32=peer == "torch-tf32")
        if result is None:
            why.append("%s: %s" % (peer, reason))
            continue
        times, iters, inertia = result
        name = "KMeans/%s/%s/manual_time" % (names[peer], shape)
        for i, t in enumerate(times):
            entries.append(entry(name, i, len(times), t, iters, inertia))
        med = statistics.median(times)
        entries.append(entry(name, None, len(times), med, iters, inertia, aggregate=True))
        ran.append(peer)
        print("%-80s %10.4f ms an iteration, %d iterations, inertia %.10g" % (name, med * 1e3, iters, inertia))
    if not ran:
        fail("no peer could run (%s)" % "; ".join(why))
    for w in why:
        print("kmeans_peers: skipped %s" % w, file=sys.stderr)
    context = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "executable": "peers/kmeans_peers.py", "library_build_type": "release", "parbench_schema": 1,
               "parbench_seed": str(prob.get("seed")), "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset")}
    try:
        import sklearn
        context["sklearn_version"] = sklearn.__version__
    except ImportError:
        pass
    try:
        import torch
        context["torch_version"] = torch.__version__
        if torch.cuda.is_available():
            context["gpu"] = torch.cuda.get_device_properties(0).name
    except ImportError:
        pass
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump({"context": context, "benchmarks": entries}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
