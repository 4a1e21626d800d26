"""How close `semrel benchmark`'s encoding runs to this machine's matrix-multiply peak: per model,
tokens encoded per second (real and padded), FLOPs per token, and the achieved fraction of peak,
with a breakdown of where the time goes.

- **Peak**: the best of ``--repeats`` fp32 ``torch.matmul`` of square n × n matrices
  (n = 1024, 2048, 4096), 2n³ FLOPs each, with torch's threads on this machine (or the GPU).
- **FLOPs per token** of an encoder with N parameters outside the embedding tables (the layers
  every token passes: attention projections and feed-forward; embedding lookups and the unused
  pooler excluded), n_layer layers of width d_attn, for a token in a sequence of L tokens:

      C(L) = 2N + 4 · n_layer · L · d_attn

  2N: a multiply and an add per parameter touched (Kaplan et al. 2020, "Scaling Laws for Neural
  Language Models", Table 1, C_forward = 2N + 2 n_layer n_ctx d_attn); the attention term counts
  both products over the L positions, Q·Kᵀ and the weighted sum of V (2 · L · d_attn each;
  Kaplan's table counts Q·Kᵀ alone).
- **Encoding**: the scorer ``semrel benchmark`` uses (:func:`semrel.trainers.scoring.load_scorer`,
  no disk cache), its batches as it makes them (sorted by token length, ``--batch-size``), over the
  distinct texts of ``--only``. *Real* tokens are each text's own (cut at the model's max length),
  *padded* the batch's longest times its size: what the forward pass computes. Useful FLOPs count
  real tokens at their own length, executed FLOPs padded ones at the batch's; each over the
  encoding's wall clock, as a fraction of the peak.
- **Breakdown**: seconds tokenising (in the helper thread, hidden behind the forward passes where
  it overlaps them), in the forward passes, and the rest of the encoding loop (cache, bookkeeping);
  inside the forward passes, torch.profiler's self CPU time of the matrix products against every
  other operator and the Python between them.

    python benchmarks/bench_roofline.py                                      # MiniLM, mpnet, e5-small
    python benchmarks/bench_roofline.py --model minilm --limit 300 --repeats 2   # a smoke run

Not part of the test suite; on a shared machine the figures are not figures (the load average is
printed).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

MATMUL_OPS = ("aten::addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::linear",
              "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::scaled_dot_product_attention",
              "aten::baddbmm")


def matmul_peak(device: str, repeats: int, sizes=(1024, 2048, 4096)) -> dict:
    """Best fp32 GFLOP/s of n × n matrix products over ``repeats`` tries of each size."""
    import torch

    best = {}
    for n in sizes:
        a, b = (torch.randn(n, n, device=device, dtype=torch.float32) for _ in range(2))
        torch.matmul(a, b)  # warm-up
        times = []
        for _ in range(repeats):
            _sync(device)
            start = time.perf_counter()
            torch.matmul(a, b)
            _sync(device)
            times.append(time.perf_counter() - start)
        best[n] = 2 * n ** 3 / min(times) / 1e9
    return {"gflops": max(best.values()), "by_size": {str(n): round(g, 1) for n, g in best.items()}}


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def shape(auto_model) -> dict:
    """N (parameters of the encoder layers), n_layer and d_attn of a transformers encoder."""
    config = auto_model.config
    return {"parameters": sum(p.numel() for p in auto_model.encoder.parameters()),
            "layers": config.num_hidden_layers, "width": config.hidden_size}


def flops_per_token(s: dict, length: np.ndarray) -> np.ndarray:
    """C(L) = 2N + 4 · n_layer · L · d_attn (see module docstring)."""
    return 2 * s["parameters"] + 4 * s["layers"] * np.asarray(length, dtype=np.float64) * s["width"]


def texts_of(only, limit: int | None) -> list[str]:
    from semrel.dataset_scripts.benchmark_sets import select_sets
    from semrel.trainers.benchmark import load_sets

    texts = sorted({t for e in load_sets(select_sets(only)) if e.rows is not None
                    for column in ("sentence1", "sentence2") for t in e.rows[column]})
    return texts if limit is None else texts[:limit]


def encode(model: str, texts: list[str], device: str, batch_size: int) -> dict:
    """The scorer's encoding of ``texts``, timed, with its batches' real and padded tokens and the
    seconds in tokenising, the forward passes and the rest."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    from semrel.trainers.scoring import load_scorer

    scorer = load_scorer(model, cache_dir=None, batch_size=batch_size, device=device)
    scorer.ensure_loaded()
    units = [(t,) for t in texts]
    lengths = np.minimum(scorer.lengths(units), scorer.max_length)
    ordered = np.sort(lengths)[::-1]  # the scorer's batches: longest first
    padded = np.concatenate([np.full(len(ordered[i:i + batch_size]), ordered[i])
                             for i in range(0, len(ordered), batch_size)])
    spent = {"tokenize": 0.0, "forward": 0.0}

    def timed(name, work):
        def run(batch):
            start = time.perf_counter()
            try:
                return work(batch)
            finally:
                spent[name] += time.perf_counter() - start
        return run

    scorer.tokenized, scorer.compute = timed("tokenize", scorer.tokenized), timed("forward", scorer.compute)
    scorer.encode(texts[:batch_size])  # warm-up: the first batch's allocations
    scorer._memory.clear()
    spent.update(tokenize=0.0, forward=0.0)
    cpu, start = time.process_time(), time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
                 ) as prof:
        scorer.encode(texts)
        _sync(device)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    ops = {e.key: e.self_cpu_time_total / 1e6 for e in prof.key_averages()}
    matmul = sum(t for k, t in ops.items() if k in MATMUL_OPS)
    aten = sum(t for k, t in ops.items() if k.startswith("aten::"))
    s = shape(scorer.model[0].auto_model)
    scorer.close()
    return {"texts": len(texts), "wall": wall, "cpu": cpu, "threads": torch.get_num_threads(), **s,
            "real_tokens": int(lengths.sum()), "padded_tokens": int(padded.sum()),
            "useful_flops": float((lengths * flops_per_token(s, lengths)).sum()),
            "executed_flops": float((padded * flops_per_token(s, padded)).sum()),
            "tokenize": spent["tokenize"], "forward": spent["forward"],
            "loop": wall - spent["forward"], "matmul_ops": matmul, "other_ops": aten - matmul}


def report(name: str, r: dict, peak: float) -> str:
    useful, executed = r["useful_flops"] / r["wall"] / 1e9, r["executed_flops"] / r["wall"] / 1e9
    return "\n".join([
        f"{name}: N = {r['parameters'] / 1e6:.1f} M parameters in {r['layers']} layers of {r['width']}; "
        f"C(L) = {2 * r['parameters'] / 1e6:.1f} MFLOP + {4 * r['layers'] * r['width'] / 1e3:.1f} kFLOP x L per token",
        f"  {r['texts']} texts in {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU ({r['cpu'] / r['wall']:.2f} cores, "
        f"{r['threads']} torch threads)",
        f"  tokens/s: {r['real_tokens'] / r['wall']:,.0f} real, {r['padded_tokens'] / r['wall']:,.0f} padded "
        f"(padding {1 - r['real_tokens'] / r['padded_tokens']:.1%} of the tokens computed)",
        f"  GFLOP/s: {useful:.1f} useful ({useful / peak:.1%} of peak), {executed:.1f} executed "
        f"({executed / peak:.1%} of peak)",
        f"  time: forward passes {r['forward']:.2f} s ({r['forward'] / r['wall']:.0%}); tokenising "
        f"{r['tokenize']:.2f} s in the helper thread; the rest of the loop {r['loop']:.2f} s "
        f"({r['loop'] / r['wall']:.0%})",
        f"  inside the forward passes (self CPU): matrix products {r['matmul_ops']:.2f} s, other operators "
        f"{r['other_ops']:.2f} s, Python and dispatch between them about "
        f"{max(r['forward'] - r['matmul_ops'] - r['other_ops'], 0.0):.2f} s"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", help="models (default: minilm, mpnet, e5-small)")
    ap.add_argument("--only", action="append", help="sets whose distinct texts are encoded (default: semrel-2024)")
    ap.add_argument("--limit", type=int, help="the first N distinct texts (sorted) only")
    ap.add_argument("--batch-size", type=int, default=64, help="as semrel benchmark's --batch-size (default: 64)")
    ap.add_argument("--repeats", type=int, default=5, help="tries of each matrix product (default: 5)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    ap.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    args = ap.parse_args(argv)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    peak = matmul_peak(args.device, args.repeats)
    print(f"{platform.node()}, {os.cpu_count()} CPUs, {args.device}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, load average {os.getloadavg()[0]:.1f}")
    print(f"fp32 matmul peak: {peak['gflops']:.1f} GFLOP/s (best of {args.repeats}; by size {peak['by_size']})")
    texts = texts_of(args.only or ["semrel-2024"], args.limit)
    for model in args.model or ["minilm", "mpnet", "e5-small"]:
        print(report(model, encode(model, texts, args.device, args.batch_size), peak["gflops"]), flush=True)


if __name__ == "__main__":
    main()
