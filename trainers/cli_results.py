"""What ``semrel fit`` and ``semrel cv`` print: a run's figures, the checkpoint it chose, and the
members and ensembles of a cv with ``--member``."""

from __future__ import annotations


def ci(interval) -> str:
    """`` [low, high]`` of a 95 % interval, or nothing where there is none."""
    return f" [{interval[0]:.4f}, {interval[1]:.4f}]" if interval else ""


def print_scores(name: str, result) -> None:
    """A run's figures: Spearman [CI], Pearson, MSE and speed, then ρ per source and language."""
    if result.spearman is None:
        print(f"{name}: trained on {result.train_pairs} pairs, not evaluated (no validation or "
              f"test split; {result.pairs_per_second:.1f} pairs/s, {result.train_seconds:.0f} s)")
        return
    print(f"{name}: Spearman {result.spearman:.4f}{ci(getattr(result, 'spearman_ci', None))}  "
          f"Pearson {result.pearson:.4f}  "
          f"MSE {result.mse:.4f}  ({result.pairs_per_second:.1f} pairs/s, "
          f"{result.train_seconds:.0f} s)")
    for source, rho in result.per_source.items():
        print(f"    {source:<12} {rho:.4f}")
    for language, rho in getattr(result, "per_language", {}).items():
        print(f"    {language:<12} {rho:.4f}")


def print_selection(name: str, result) -> None:
    """The dev curve of a run that chose its checkpoint on dev, the one it kept, the pairs omitted."""
    from .selection import selection_line

    if result.selection:
        print(selection_line(name, result.selection))


def print_ensemble(ensemble) -> None:
    """cv --member: Spearman per fold of each member and ensemble, then the paired tests."""
    names = list(next(iter(ensemble.folds.values())))
    print("Spearman per fold: members, then their rank average and out-of-fold stack")
    print(f"{'fold':<12}" + "".join(f"{n[:22]:>24}" for n in names))
    for fold, scores in ensemble.folds.items():
        print(f"{fold:<12}" + "".join(f"{scores[n]:>24.4f}" for n in names))
    mean = ensemble.mean()
    print(f"{'mean':<12}" + "".join(f"{mean[n]:>24.4f}" for n in names))
    if ensemble.comparisons:
        print("ensemble - member on the pooled out-of-fold predictions: Spearman difference [95% CI] "
              "(paired bootstrap p; Williams' p for Pearson)")
    for method, members in ensemble.comparisons.items():
        for member, c in members.items():
            if "error" in c:
                print(f"    {method} - {member}: not tested ({c['error']})")
                continue
            low, high = c["spearman_difference_ci"]
            print(f"    {method} - {member}: {c['spearman_difference']:+.4f} [{low:+.4f}, {high:+.4f}] "
                  f"(p {c['spearman_p_value']:.4f}; Williams p {c['williams_p_value']:.4f}; n {c['n']})")
