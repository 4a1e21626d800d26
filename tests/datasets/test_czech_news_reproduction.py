"""scripts/reproduce_czech_news.py prints the paper's numbers beside ours (free, and with dep)."""

from __future__ import annotations

from scripts.reproduce_czech_news import main


def test_reproduction_prints_table1_inter_row_and_bound(mirror, cache_dir, capsys):
    main(["--mirror", str(mirror), "--cache-dir", str(cache_dir)])
    out = capsys.readouterr().out
    assert "free test: 1,200 pairs, 10,800 annotations" in out
    assert "  pearson                    0.861   0.878  +0.017   0.843" in out
    assert "  mse                        1.035   0.949  -0.086   1.201" in out
    assert "  MSE lower bound (t)       0.1731  0.1582 -0.0149" in out
    assert "  MSE lower bound (normal)       -  0.1186" in out
    assert "Why the numbers differ" in out


def test_reproduction_with_user_dep_file(mirror, tmp_path, capsys):
    free_rows = (mirror / "czech-news-sts" / "free-test.tsv").read_text(encoding="utf-8").splitlines()
    lines = []
    for row, labels in ((0, "4,4,5,4"), (1, "0,1,1,2")):
        s1, s2, _, _, r1 = free_rows[row].split("\t")
        mean = sum(map(int, labels.split(","))) / 4
        lines.append(f"<sent>{s1}</sent>\t{s2}\t{mean}\t{labels}\t{r1}\n")
    (tmp_path / "dep-test.tsv").write_text("".join(lines), encoding="utf-8")
    main(["--mirror", str(mirror), "--data-dir", str(tmp_path), "--cache-dir", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert "dep test (user-supplied): 2 pairs, 8 annotations" in out
    assert "free + dep: 1,202 pairs, 10,808 annotations" in out
