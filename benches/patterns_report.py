"""The tables, issue 10's targets and the plot of benches/patterns.py."""

import ortbench

CONTENDERS = ["builtin", "library", "rewritten", "numpy", "compress", "floor"]
LABELS = {"builtin": "original, built-in", "library": "original, library", "rewritten": "rewritten, library",
          "numpy": "numpy", "compress": "ONNX Compress", "floor": "floor"}
COLORS = {"builtin": "tab:blue", "library": "tab:orange", "rewritten": "tab:green", "numpy": "tab:red",
          "compress": "tab:purple", "floor": "black"}


def ratio(row, a, b):
    ms = row["ms"]
    if a not in ms or b not in ms:
        return "n/a"
    return f"{ms[a] / ms[b]:.1f}x" if ms[a] / ms[b] >= 10 else f"{ms[a] / ms[b]:.2f}x"


def tables(rows, rewrite_available):
    unit = lambda n: "ms" if n >= 1 << 20 else "us"  # noqa: E731
    scale = lambda n: 1 if n >= 1 << 20 else 1e3  # noqa: E731
    out = []
    out.append("| pattern | mask elements | nnz | " + " | ".join(LABELS[c] for c in CONTENDERS) + " |")
    out.append("|---|---:|---:|" + "---:|" * len(CONTENDERS))
    for r in rows:
        cells = [f"{r['ms'][c] * scale(r['mask_elements']):.{2 if r['mask_elements'] >= 1 << 20 else 1}f} {unit(r['mask_elements'])}"
                 if c in r["ms"] else "n/a" for c in CONTENDERS]
        out.append(f"| {r['pattern']} | {size_name(r['mask_elements'])} | {r['nnz']} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Ratios (how many times the first is slower than the second; n/a: contender not available):")
    out.append("")
    out.append("| pattern | mask elements | built-in / library | built-in / rewritten | library / rewritten "
               "| rewritten / floor | library / floor | numpy / rewritten | Compress / rewritten |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out.append(f"| {r['pattern']} | {size_name(r['mask_elements'])} | {ratio(r, 'builtin', 'library')} | "
                   f"{ratio(r, 'builtin', 'rewritten')} | {ratio(r, 'library', 'rewritten')} | "
                   f"{ratio(r, 'rewritten', 'floor')} | {ratio(r, 'library', 'floor')} | "
                   f"{ratio(r, 'numpy', 'rewritten')} | {ratio(r, 'compress', 'rewritten')} |")
    if not rewrite_available:
        out.append("")
        out.append(f"`{ortbench.CLI} optimize` does not exist in this build: the rewritten column is not available.")
    for r in rows:
        if r.get("rewrite_error"):
            out.append("")
            out.append(f"{r['pattern']}, {size_name(r['mask_elements'])}: no rewritten figure, {r['rewrite_error']}")
    return "\n".join(out) + "\n"


def targets(rows):
    """Issue 10's targets, each with the figure it is judged on (n/a when a contender is missing)."""
    def find(key, large):
        return [r for r in rows if r["key"] == key and (r["mask_elements"] >= 1 << 20) == large]

    def fig(r, a, b):
        return r["ms"][a] / r["ms"][b] if a in r["ms"] and b in r["ms"] else None

    def verdict(ok):
        return "n/a" if ok is None else ("met" if ok else "not met")

    out = ["| target (issue 10) | figure | verdict |", "|---|---|---|"]
    for r in find("index_mask", True):
        bi, fl = fig(r, "builtin", "rewritten"), fig(r, "rewritten", "floor")
        out.append(f"| x[mask] 16M: rewritten at least 30x faster than the built-in | "
                   f"{'n/a' if bi is None else f'{bi:.1f}x'} | {verdict(None if bi is None else bi >= 30)} |")
        out.append(f"| x[mask] 16M: rewritten within 1.5x of the floor | {'n/a' if fl is None else f'{fl:.2f}x'} | "
                   f"{verdict(None if fl is None else fl <= 1.5)} |")
        for other in ("numpy", "compress"):
            v = fig(r, other, "rewritten")
            out.append(f"| x[mask] 16M: rewritten at least 5x faster than {LABELS[other]} | "
                       f"{'n/a' if v is None else f'{v:.1f}x'} | {verdict(None if v is None else v >= 5)} |")
    for r in find("nonzero_transpose", True):
        v = fig(r, "library", "rewritten")
        out.append(f"| torch.nonzero 16M: rewritten at least 3x faster than the original with the library | "
                   f"{'n/a' if v is None else f'{v:.2f}x'} | {verdict(None if v is None else v >= 3)} |")
    small = [r for r in rows if r["mask_elements"] < 1 << 20]
    measured = [r for r in small if "rewritten" in r["ms"]]
    slower = [f"{r['pattern']} {size_name(r['mask_elements'])} ({fig(r, 'rewritten', 'library'):.2f}x)"
              for r in measured if r["ms"]["rewritten"] > r["ms"]["library"]]
    out.append(f"| masks of 1K-64K: rewritten no slower than the original with the library | "
               f"{'n/a' if not measured else ('slower: ' + ', '.join(slower) if slower else f'all {len(measured)} cases')} | "
               f"{verdict(None if not measured else not slower)} |")
    return "\n".join(out) + "\n"


def size_name(n):
    if n >= 1 << 20:
        return f"{n / (1 << 20):g}M"
    return f"{n // 1024}K" if n % 1024 == 0 else str(n)


def plot(rows, path, threads):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    large = [r for r in rows if r["mask_elements"] >= 1 << 20]
    small = [r for r in rows if r["mask_elements"] < 1 << 20]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    width = 0.8 / len(CONTENDERS)
    for j, c in enumerate(CONTENDERS):
        xs = [i + (j - len(CONTENDERS) / 2 + 0.5) * width for i, r in enumerate(large) if c in r["ms"]]
        ys = [r["ms"][c] for r in large if c in r["ms"]]
        if ys:
            ax1.bar(xs, ys, width, label=LABELS[c], color=COLORS[c])
    ax1.set_xticks(range(len(large)), [r["pattern"] for r in large], rotation=15, ha="right", fontsize=8)
    ax1.set_yscale("log")
    ax1.set_ylabel("ms per call (median)")
    ax1.set_title(f"X = 16M float32 (64 MB), 50% mask, {threads} threads", fontsize=10)
    ax1.grid(True, axis="y", which="both", alpha=0.3)
    if large:
        ax1.legend(fontsize=7)
    key = "index_mask" if any(r["key"] == "index_mask" for r in small) else (small[0]["key"] if small else None)
    sizes = sorted({r["mask_elements"] for r in small if r["key"] == key})
    for c in CONTENDERS:
        pts = [(r["mask_elements"], r["ms"][c] * 1e3) for r in small if r["key"] == key and c in r["ms"]]
        if pts:
            ax2.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if c != "floor" else ":", label=LABELS[c],
                     color=COLORS[c])
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log")
    ax2.set_xticks(sizes, [size_name(s) for s in sizes])
    ax2.set_xlabel("mask elements")
    ax2.set_ylabel("us per call (median)")
    ax2.set_title(f"{next((r['pattern'] for r in small if r['key'] == key), 'no')} small masks", fontsize=10)
    ax2.grid(True, which="both", alpha=0.3)
    if sizes:
        ax2.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
