#!/usr/bin/env python3
"""The MLP family's peer: the same training step in PyTorch on the GPU.

One step is what `bench`'s MLP family times: forward through Linear layers
(hidden activation sigmoid or ReLU), softmax cross-entropy (mean over the
batch), backward, and plain SGD (no momentum) on every weight and bias. Same
shapes and precision; TF32 off, as parbench's GEMMs use plain FP32. Timing:
CUDA events around `--steps` consecutive steps after a warm-up, the per-step
time of each of `--repetitions` such groups, their median reported.

Writes Google Benchmark JSON in parbench's schema 1, entries named like
bench's (`MLP/PyTorch.Eager/data:synthetic/type:f32/widths:784-1024-1024-10/
act:relu/batch:1024/manual_time`, counter `samples_per_second`), so
ci/table and the report read it beside a bench run:

    python3 peers/mlp_torch.py --widths=784-1024-1024-10 --batch=64,1024 \\
        --type=f32 --act=relu --mode=eager,graph --out=mlp-torch.json

Exit status: 0; 2 on a bad argument or when PyTorch or a GPU is missing (one
line on stderr).
"""
import argparse
import datetime
import json
import statistics
import sys


def fail(msg):
    print("mlp_torch: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--widths", default="784-1024-1024-10", help="layer widths, e.g. 784-1024-1024-10")
    ap.add_argument("--batch", default="64,1024", help="batch sizes, comma-separated")
    ap.add_argument("--type", default="f32", choices=("f32", "f64"))
    ap.add_argument("--act", default="relu", choices=("relu", "sigmoid"))
    ap.add_argument("--lr", type=float, default=0.1)
    ap.add_argument("--steps", type=int, default=50, help="steps a timed group (default 50)")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--mode", default="eager",
                    help="eager (PyTorch.Eager), graph (PyTorch.Graph: the whole step captured once in a CUDA "
                         "graph, torch.cuda.graph, and replayed), or both: eager,graph")
    ap.add_argument("--out", required=True, help="JSON file to write")
    a = ap.parse_args(argv)
    try:
        a.widths = [int(w) for w in a.widths.split("-")]
        a.batch = [int(b) for b in a.batch.split(",")]
    except ValueError:
        fail("--widths and --batch take integers (784-128-10, 64,1024)")
    if len(a.widths) < 2 or min(a.widths) < 1 or min(a.batch) < 1:
        fail("widths need at least two entries and every width and batch must be >= 1")
    a.mode = a.mode.split(",")
    if not a.mode or any(m not in ("eager", "graph") for m in a.mode):
        fail("--mode takes eager, graph or eager,graph")
    if a.steps < 1 or a.repetitions < 1 or a.warmup < 0:
        fail("--steps and --repetitions must be >= 1, --warmup >= 0")
    return a


def main(argv):
    a = parse_args(argv)
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed")
    if not torch.cuda.is_available():
        fail("no CUDA GPU visible to PyTorch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    dtype = torch.float32 if a.type == "f32" else torch.float64
    torch.manual_seed(1)
    widths_name = "-".join(str(w) for w in a.widths)
    entries = []
    for mode, batch in [(m, b) for b in a.batch for m in a.mode]:
        layers = []
        for i in range(len(a.widths) - 1):
            layers.append(torch.nn.Linear(a.widths[i], a.widths[i + 1]))
            if i + 2 < len(a.widths):
                layers.append(torch.nn.ReLU() if a.act == "relu" else torch.nn.Sigmoid())
        model = torch.nn.Sequential(*layers).to(device=dev, dtype=dtype)
        opt = torch.optim.SGD(model.parameters(), lr=a.lr)
        loss_fn = torch.nn.CrossEntropyLoss()
        x = torch.rand(batch, a.widths[0], device=dev, dtype=dtype)
        y = torch.randint(0, a.widths[-1], (batch,), device=dev)

        def step():
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            return loss

        if mode == "graph":
            # The recipe of PyTorch's CUDA graph notes: warm up on a side
            # stream, capture one whole step (forward, backward, SGD) on static
            # tensors, then replay it.
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(max(3, a.warmup)):
                    step()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            opt.zero_grad(set_to_none=True)
            with torch.cuda.graph(graph):
                static_loss = loss_fn(model(x), y)
                static_loss.backward()
                opt.step()

            def step():  # noqa: F811 (the replay replaces the eager step)
                graph.replay()
                return static_loss

        for _ in range(a.warmup):
            step()
        torch.cuda.synchronize()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        per_step = []
        for _ in range(a.repetitions):
            start.record()
            for _ in range(a.steps):
                loss = step()
            stop.record()
            stop.synchronize()
            per_step.append(start.elapsed_time(stop) / 1e3 / a.steps)
        name = "MLP/PyTorch.%s/data:synthetic/type:%s/widths:%s/act:%s/batch:%d/manual_time" % (
            "Eager" if mode == "eager" else "Graph", a.type, widths_name, a.act, batch)
        for i, t in enumerate(per_step):
            entries.append(gb_entry(name, i, len(per_step), a.steps, t, batch, float(loss.item())))
        med = statistics.median(per_step)
        entries.append(gb_entry(name, None, len(per_step), a.steps, med, batch, float(loss.item())))
        print("%-90s %9.4f ms %12.0f samples/s" % (name, med * 1e3, batch / med))
    props = torch.cuda.get_device_properties(0)
    doc = {
        "context": {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "executable": "peers/mlp_torch.py", "library_build_type": "release",
            "gpu": props.name, "gpu_sm_count": str(props.multi_processor_count),
            "torch_version": torch.__version__, "torch_cuda": str(torch.version.cuda),
            "allow_tf32": "false", "parbench_schema": 1,
        },
        "benchmarks": entries,
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    return 0


def gb_entry(name, rep, reps, steps, seconds, batch, loss):
    """One iteration (rep given) or median entry in Google Benchmark 1.8's layout."""
    e = {"name": name if rep is not None else name + "_median", "family_index": 0,
         "per_family_instance_index": 0, "run_name": name,
         "run_type": "iteration" if rep is not None else "aggregate", "repetitions": reps, "threads": 1}
    if rep is None:
        e.update(aggregate_name="median", aggregate_unit="time")
    else:
        e["repetition_index"] = rep
    e.update(iterations=steps, real_time=seconds * 1e3, cpu_time=seconds * 1e3, time_unit="ms",
             samples_per_second=batch / seconds, batch=float(batch), loss=loss, on_gpu=1.0,
             parbench={"disposition": "passed", "role": "variant", "device": "gpu"})
    return e


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
