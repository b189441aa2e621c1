"""Latency of every explorer: time from an ε-slider change to a finished redraw, in a real kernel.

A diagnostic: it times the kernel's share only. What a student feels (the messages, the chart's
size, Vega's rendering) is measured in the browser by ``benchmarks/widget_latency_browser.py``;
the targets (median < 300 ms, p90 < 600 ms) apply to that one.

    python benchmarks/widget_latency.py [--changes 15] [--only NAME ...]

Starts an IPython kernel (jupyter_client), builds each explorer of ``dpexplore/widgets/*.py`` on
the data its notebook uses (Adult unless the explorer is about another table), and sets its ε
slider ``--changes`` times to values spread over the slider's range. ``slider.value = v`` runs the
explorer's own observer synchronously: the recomputation, the chart building, and the display
into its Output widget (altair's JSON serialisation and the iopub message included). The time of
that assignment is the redraw latency; one change before timing warms caches. Explorers found in
the modules but without a case here are listed as "no case" (``auc_explorer`` has no ε slider:
its dropdown switches between precomputed sweeps). Target: median < 300 ms. Explorers listed in
``MOVES`` are then also timed over a fixed sequence of moves of every slider (DiffMulti's ε, h and
DiffGen steps), each move one redraw.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_MS = 300.0
# apps whose ε slider does not redraw anything: the time is that of the Release button they offer
BUTTON_APPS = {"YourDataApp"}

SETUP = """
import os, time, json, warnings
os.environ.setdefault("OMP_NUM_THREADS", "1")
import numpy as np, pandas as pd
import ipywidgets as W
# no blanket filter: the explorers filter the warnings they expect (DegenerateCurveWarning,
# NotDifferentiallyPrivateWarning, EmptySyntheticWarning; the app shows its own), and these cases
# raise no other; one that appears goes to the kernel's stderr, which run() does not read
from dpexplore.datasets import load_adult, load_iris, train_test_split
frame, schema = load_adult()

def find_slider(root, prefer="ε"):
    seen, stack, found = set(), [root], []
    while stack:
        w = stack.pop()
        if id(w) in seen:
            continue
        seen.add(id(w))
        if isinstance(w, (W.FloatLogSlider, W.FloatSlider, W.SelectionSlider)) and prefer in (w.description or ""):
            found.append(w)
        stack.extend(getattr(w, "children", ()) or ())
    if not found:
        raise LookupError(f"no slider whose description has {prefer!r}")
    return found[0]

def time_moves(moves):
    times = []
    for slider, value in moves:          # each assignment triggers exactly one update()
        t0 = time.perf_counter()
        slider.value = value
        times.append(1000 * (time.perf_counter() - t0))
    return times

def time_slider(slider, changes):
    if isinstance(slider, W.SelectionSlider):   # one option at a time, as a key press does
        n = len(slider.options)
        times, i = [], slider.index or 0
        for _ in range(changes):
            i = i + 1 if i + 1 < n else 0
            t0 = time.perf_counter()
            slider.index = i
            times.append(1000 * (time.perf_counter() - t0))
        return times
    if isinstance(slider, W.FloatLogSlider):
        vals = slider.base ** np.linspace(slider.min, slider.max, 7)
    else:
        vals = np.linspace(slider.min, slider.max, 7)
    vals = [float(v) for v in vals]
    order = [vals[i % len(vals)] for i in (3, 0, 6, 2, 5, 1, 4)]
    slider.value = order[0] if abs(order[0] - slider.value) > 1e-12 else order[1]   # warm-up
    times = []
    for i in range(changes):
        v = order[(i + 1) % len(order)]
        if abs(v - slider.value) < 1e-12:
            v = order[(i + 2) % len(order)]
        t0 = time.perf_counter()
        slider.value = v
        times.append(1000 * (time.perf_counter() - t0))
    return times
"""

# name → (module, setup code, expression giving the root widget / explorer, data label)
CASES: dict[str, tuple[str, str, str, str]] = {
    "NoiseExplorer": ("mechanisms", "from dpexplore.widgets.mechanisms import NoiseExplorer\n"
                      "exp = NoiseExplorer(int((frame['age'] >= 90).sum()), epsilon=1.0)",
                      "exp.widget", "Adult count"),
    "PrivacyLossExplorer": ("mechanisms", "from dpexplore.widgets.mechanisms import PrivacyLossExplorer\n"
                            "exp = PrivacyLossExplorer(int((frame['age'] >= 90).sum()), epsilon=1.0, sensitivity=2)",
                            "exp.widget", "Adult count"),
    "ExponentialExplorer": ("mechanisms", "from dpexplore.widgets.mechanisms import ExponentialExplorer\n"
                            "exp = ExponentialExplorer(frame.sample(1000, random_state=0), schema, "
                            "['occupation', 'education', 'marital-status', 'workclass'])",
                            "exp.widget", "Adult 1000 rows"),
    "BudgetExplorer": ("mechanisms", "from dpexplore.widgets.mechanisms import BudgetExplorer\n"
                       "exp = BudgetExplorer(frame, schema, category='education', numeric='age', total=1.0)",
                       "exp.widget", "Adult"),
    "PrivPfCExplorer": ("privpfc", "from dpexplore.widgets.privpfc import PrivPfCExplorer\n"
                        "X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=0.2, random_state=0)\n"
                        "exp = PrivPfCExplorer(X_train, y_train, X_test, y_test, schema, epsilon=1.0)",
                        "exp.widget", "Adult"),
    "DiffMultiExplorer": ("diffmulti", "from dpexplore.widgets.diffmulti import DiffMultiExplorer\n"
                          "X_train, X_test, y_train, y_test = train_test_split(frame, schema, test_size=1/3, random_state=0)\n"
                          "exp = DiffMultiExplorer(X_train, y_train, schema, x='age', y_attribute='education-num', h=300)",
                          "exp.widget", "Adult"),
    "FeatureSelectionNBExplorer": ("thesis", "from dpexplore.widgets.thesis import FeatureSelectionNBExplorer\n"
                                   "from dpexplore.models.naive_bayes import Binarizer\n"
                                   "X_tr, X_te, y_tr, y_te = train_test_split(frame, schema, test_size=1/3, random_state=0)\n"
                                   "b = Binarizer(schema).fit()\n"
                                   "exp = FeatureSelectionNBExplorer(b.transform(X_tr), y_tr, b.transform(X_te), y_te, "
                                   "n_min=30_000, classes=list(schema.classes), repeats=50, random_state=0)",
                                   "exp.widget", "Adult"),
    "LogisticNoiseExplorer": ("thesis", "from dpexplore.widgets.thesis import LogisticNoiseExplorer\n"
                              "exp = LogisticNoiseExplorer(random_state=0)", "exp.widget", "toy (its notebook's)"),
    "PrivateROCExplorer": ("roc", "from dpexplore.widgets.roc import PrivateROCExplorer\n"
                           "from sklearn.compose import ColumnTransformer\n"
                           "from sklearn.pipeline import make_pipeline\n"
                           "from sklearn.preprocessing import OneHotEncoder, StandardScaler\n"
                           "from sklearn.linear_model import LogisticRegression\n"
                           "order = np.random.default_rng(0).permutation(len(frame))\n"
                           "test, train = frame.iloc[order[:600]], frame.iloc[order[600:10_600]]\n"
                           "X_train, y_train = schema.split(train); X_test, y_test = schema.split(test)\n"
                           "pos = schema.classes[-1]\n"
                           "lr = make_pipeline(ColumnTransformer([('num', StandardScaler(), schema.numeric), "
                           "('cat', OneHotEncoder(handle_unknown='ignore'), schema.categorical)]), "
                           "LogisticRegression(max_iter=1000)).fit(X_train, y_train)\n"
                           "y = (y_test == pos).to_numpy().astype(int)\n"
                           "exp = PrivateROCExplorer(y, {'LR': lr.predict_proba(X_test)[:, list(lr.classes_).index(pos)]}, "
                           "classes=[0, 1])",
                           "exp.widget", "Adult (600 test rows)"),
    "FeatureSelectionExplorer": ("roc", "from dpexplore.widgets.roc import FeatureSelectionExplorer\n"
                                 "from dpexplore.select import stoddard\n"
                                 "order = np.random.default_rng(0).permutation(len(frame))\n"
                                 "test, train = frame.iloc[order[:600]], frame.iloc[order[600:10_600]]\n"
                                 "X_train, y_train = schema.split(train); X_test, y_test = schema.split(test)\n"
                                 "exp = FeatureSelectionExplorer(stoddard.binarize_leaves(X_train, schema), y_train, "
                                 "stoddard.binarize_leaves(X_test, schema), y_test, max_ones=len(schema.predictors), "
                                 "classes=list(schema.classes))",
                                 "exp.widget", "Adult (10,000 rows)"),
    # its histogram table is limited to 400 cells: Adult's projection (4760 cells) is refused, so
    # it is timed on Iris, as in notebook 06
    "selection_explorer": ("projected", "from dpexplore.widgets import projected as explore\n"
                           "iris, iris_schema = load_iris()\n"
                           "X_train, X_test, y_train, y_test = train_test_split(iris, iris_schema, test_size=0.1, random_state=0)\n"
                           "exp = explore.selection_explorer(X_train, y_train, iris_schema, n_bins='projected')",
                           "exp", "Iris (as notebook 06)"),
    "survival_explorer": ("projected", "from dpexplore.widgets import projected as explore\n"
                          "exp = explore.survival_explorer(36_000)", "exp", "n = 36,000"),
    "ShowdownExplorer": ("showdown", "from dpexplore.widgets.showdown import ShowdownExplorer\n"
                         "from dpexplore.evaluate.sweeps import sweep, baselines, summarise\n"
                         "from dpexplore.evaluate.showdown import candidate_methods\n"
                         "_m = {k: v for k, v in candidate_methods(schema).items() if k in ('DiffGen', 'k-subset + NB')}\n"
                         "_r = pd.concat([sweep(_m, (frame, schema), [0.03, 0.1, 0.3, 1.0], 1, random_state=0, progress=False),\n"
                         "                baselines((frame, schema), 1, random_state=0)])\n"
                         "exp = ShowdownExplorer(summarise(_r).assign(dataset='Adult'), epsilon=0.1)",
                         "exp.widget", "Adult sweep summary"),
    "GaussianExplorer": ("gaussian", "from dpexplore.widgets.gaussian import GaussianExplorer\n"
                         "exp = GaussianExplorer(epsilon=1.0, delta=1e-5)", "exp.widget", "closed forms (its notebook's)"),
    "CompositionExplorer": ("composition", "from dpexplore.widgets.composition import CompositionExplorer\n"
                            "exp = CompositionExplorer(epsilon=0.1, delta=1e-6, k=45)", "exp.widget",
                            "closed forms (its notebook's)"),
    "SparseVectorExplorer": ("svt", "from dpexplore.widgets.svt import SparseVectorExplorer\n"
                             "_hi = frame[frame[schema.target] == schema.classes[-1]]\n"
                             "_q = _hi['age'].value_counts().reindex(np.arange(22, 38), fill_value=0).to_numpy(float)\n"
                             "exp = SparseVectorExplorer(_q, threshold=250.0, epsilon=0.2)", "exp.widget",
                             "Adult: high earners per age (its notebook's)"),
    "YourDataApp": ("your_data", "from dpexplore.widgets.your_data import YourDataApp\n"
                    "import io\n"
                    "exp = YourDataApp(epsilon=1.0)\n"
                    "exp.load(frame.to_csv(index=False).encode(), 'adult.csv')\n"
                    "_s = exp.epsilon  # its slider redraws nothing: time slider change + Release\n"
                    "_s.observe(lambda ch: exp.release(), names='value')",
                    "exp.widget", "Adult: Release button"),
    "ReconstructionExplorer": ("attacks", "from dpexplore.widgets.attacks import ReconstructionExplorer\n"
                               "exp = ReconstructionExplorer(pd.read_csv('notebooks/results/10_reconstruction.csv'))\n"
                               "_s = exp.noise  # no ε: the error bound E, option by option",
                               "exp.widget", "cached sweep (its notebook's)"),
    "MembershipExplorer": ("attacks", "from dpexplore.widgets.attacks import MembershipExplorer, dp_models\n"
                           "from dpexplore.models.naive_bayes import Binarizer\n"
                           "from sklearn.ensemble import RandomForestClassifier\n"
                           "_b = Binarizer(schema).fit()\n"
                           "_o = np.random.default_rng(0).permutation(len(frame))\n"
                           "_m, _n = frame.iloc[_o[:500]], frame.iloc[_o[500:1000]]\n"
                           "_X = [_b.transform(p.drop(columns=schema.target)) for p in (_m, _n)]\n"
                           "_y = [(p[schema.target] == '>50K').to_numpy().astype(int) for p in (_m, _n)]\n"
                           "_f = RandomForestClassifier(n_estimators=200, random_state=0).fit(_X[0], _y[0])\n"
                           "exp = MembershipExplorer((_X[0], _y[0]), (_X[1], _y[1]), {'random forest': _f}, "
                           "models=dp_models([0, 1]))", "exp.widget", "Adult: 500 members (its notebook's)"),
    "LocalCentralExplorer": ("local_dp", "from dpexplore.widgets.local_dp import LocalCentralExplorer\n"
                             "exp = LocalCentralExplorer((frame['income'] == '>50K').to_numpy().astype(int))\n"
                             "_s = exp.n  # the heavier slider: up to 45,222 people × 100 releases",
                             "exp.widget", "Adult income bits (its notebook's)"),
}

# name → expression giving [(slider, value), ...] on the explorer ``exp`` of its case
MOVES: dict[str, str] = {
    "DiffMultiExplorer": "[(exp.eps_slider, v) for v in (0.5, 2.0, 1.0, 0.2, 1.0)]"
                         " + [(exp.h_slider, v) for v in (100, 1000, 30, 300)]"
                         " + [(exp.steps_slider, v) for v in (4, 10, 6)]",
}


def discover() -> dict[str, str]:
    """Explorer classes (``*Explorer``, ``*App``) and ``*_explorer`` functions in dpexplore/widgets."""
    found = {}
    for path in sorted((ROOT / "dpexplore" / "widgets").glob("*.py")):
        if path.name.startswith("_"):
            continue
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and (node.name.endswith("Explorer") or node.name.endswith("App")) \
                    and not node.name.startswith("_"):
                found[node.name] = path.stem
            elif isinstance(node, ast.FunctionDef) and node.name.endswith("_explorer"):
                found[node.name] = path.stem
    return found


def run(changes: int, only: list[str] | None) -> list[dict]:
    from jupyter_client.manager import start_new_kernel

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(ROOT), env=env)
    results = []

    def execute(code: str, timeout: float = 900) -> tuple[str, str | None]:
        msg_id = kc.execute(code)
        out, err = [], None
        while True:
            msg = kc.get_iopub_msg(timeout=timeout)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            t, c = msg["msg_type"], msg["content"]
            if t == "stream" and c["name"] == "stdout":
                out.append(c["text"])
            elif t == "error":
                err = f"{c['ename']}: {c['evalue']}"
            elif t == "status" and c["execution_state"] == "idle":
                return "".join(out), err

    try:
        _, err = execute(SETUP)
        if err:
            raise RuntimeError(f"setup failed: {err}")
        found = discover()
        for name, module in found.items():
            if only and name not in only:
                continue
            if name not in CASES:
                results.append({"explorer": name, "module": module, "status": "no case"})
                continue
            _, setup, root, label = CASES[name]
            code = setup + f"\n_root = {root}\n" + \
                "_s = globals().get('_s') or find_slider(_root)\n" + \
                f"print('RESULT' + json.dumps(time_slider(_s, {changes})))\n_s = None\n"
            out, err = execute(code)
            row = {"explorer": name, "module": module, "data": label}
            if err:
                row["status"] = f"error: {err}"[:120]
            else:
                times = json.loads(out.split("RESULT", 1)[1].splitlines()[0])
                row.update(status="ok", times=times)
                if name in MOVES:
                    out, err = execute(f"print('MOVES' + json.dumps(time_moves({MOVES[name]})))")
                    if not err:
                        row["moves"] = json.loads(out.split("MOVES", 1)[1].splitlines()[0])
            results.append(row)
            print(f"  measured {name}", file=sys.stderr, flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return results


def main() -> None:
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=15)
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    rows = run(args.changes, args.only)
    print(f"{'explorer':<28} {'module':<10} {'data':<26} {'median ms':>9} {'p90 ms':>8}  verdict")
    slow = []
    for r in rows:
        if r["status"] != "ok":
            print(f"{r['explorer']:<28} {r['module']:<10} {r.get('data', ''):<26} {'':>9} {'':>8}  {r['status']}")
            continue
        t = np.asarray(r["times"])
        med, p90 = float(np.median(t)), float(np.percentile(t, 90))
        verdict = "ok" if med < TARGET_MS else "TOO SLOW"
        if r["explorer"] in BUTTON_APPS:
            verdict = "n/a (button, not a slider redraw)"
        elif med >= TARGET_MS:
            slow.append(r["explorer"])
        print(f"{r['explorer']:<28} {r['module']:<10} {r['data']:<26} {med:9.0f} {p90:8.0f}  {verdict}")
    for r in rows:
        if "moves" in r:
            t = np.asarray(r["moves"])
            print(f"{r['explorer']}: every slider over {len(t)} moves: median {np.median(t):.0f} ms, "
                  f"max {t.max():.0f} ms")
    print(f"\n{len(rows)} explorers; target median < {TARGET_MS:.0f} ms; too slow: {', '.join(slow) or 'none'}")


if __name__ == "__main__":
    main()
