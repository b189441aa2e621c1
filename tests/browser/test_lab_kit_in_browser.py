"""The lab kit's "no spoilers" as a student sees it, offline in Chromium (``notebooks/README.md``):

- a stored student notebook opened in JupyterLab without a kernel shows an explanation after a
  check folded (its summary visible, its text not), and unfolds it on a click;
- the cell that answers a prediction shows as never run: no output, an empty prompt;
- the HTML export (``jupyter nbconvert --to html``, a plain renderer) folds it too;
- the Voilà apps (01, 07), served as a class gets them (the launcher, ``voila.json``, dpexplore's
  template), show neither the exercises nor the prose that only the lab needs (cells tagged
  ``lab-only``): no "Spot the bug … read it" without the code to read, no prompt without a cell.

Screenshots: ``lab_kit_folded.png`` and ``lab_kit_unfolded.png`` (the explanation after 06.4's
check), ``lab_kit_prediction.png`` (06.4's check, the chart cell with no stored output, the folded
explanation), ``lab_kit_export.png`` (the same place in the HTML export), ``lab_kit_voila_01.png``
(the 01 app where the lab's "Spot the bug" section is).
"""
from __future__ import annotations

import json
import shutil
import sys

import pytest

import axedriver as axe
import labdriver as lab
from conftest import NOTEBOOKS, ROOT, Server, free_port

NAME = "06_projected_histograms.ipynb"
SUMMARY = "Why the empty cells behave so"
HIDDEN = "it does not depend on ε"


def _cells(ipynb) -> list[dict]:
    return json.loads(ipynb.read_text())["cells"]


def _check_index(cells, exercise_id: str) -> int:
    return next(i for i, c in enumerate(cells)
                if "self-check" in c["metadata"].get("tags", []) and exercise_id in "".join(c["source"]))


def test_stored_notebook_folds_the_explanation_and_leaves_the_prediction_unrun(
        all_cells_lab, served_root, page, screenshot_dir):
    cells = _cells(served_root / NAME)
    check = _check_index(cells, "06.4")
    reveal = check + 2                      # after the check: the chart's caption, then the chart
    assert "reveal" in cells[reveal]["metadata"]["tags"] and not cells[reveal]["outputs"]
    axe.open_stored_in_lab(page, all_cells_lab.url, NAME)
    notebook_cells = page.locator(".jp-Notebook .jp-Cell")

    unrun = notebook_cells.nth(reveal)
    unrun.scroll_into_view_if_needed()
    assert unrun.locator(".jp-OutputArea-output").count() == 0, "the prediction's answer is on the page"
    assert unrun.locator(".jp-InputPrompt").inner_text().strip() in ("[ ]:", "[\u00a0]:")
    notebook_cells.nth(check).evaluate("e => e.scrollIntoView({block: 'start'})")
    page.screenshot(path=str(screenshot_dir / "lab_kit_prediction.png"))

    details = page.locator(".jp-MarkdownCell details").filter(has_text=SUMMARY)
    assert details.count() == 1
    body = details.locator("p").filter(has_text=HIDDEN)
    details.scroll_into_view_if_needed()
    assert details.evaluate("d => d.open") is False
    assert details.locator("summary").is_visible() and not body.is_visible(), "the explanation is not folded"
    details.screenshot(path=str(screenshot_dir / "lab_kit_folded.png"))
    details.locator("summary").click()
    body.wait_for(state="visible", timeout=5_000)
    details.screenshot(path=str(screenshot_dir / "lab_kit_unfolded.png"))
    assert not lab.page_problems(page)


def test_html_export_folds_the_explanation(served_root, page, screenshot_dir, tmp_path):
    server = axe.StaticServer(tmp_path)
    try:
        html = axe.export_html(served_root / NAME, tmp_path)
        axe.open_html(page, f"{server.url}/{html.name}")
        details = page.locator("details").filter(has_text=SUMMARY)
        assert details.count() == 1
        details.scroll_into_view_if_needed()
        assert details.evaluate("d => d.open") is False
        assert not details.locator("p").filter(has_text=HIDDEN).is_visible()
        page.screenshot(path=str(screenshot_dir / "lab_kit_export.png"))
        assert page.locator("details[open]").count() == 0, "an explanation is exported unfolded"
    finally:
        server.stop()


# text of cells tagged lab-only (or exercise), which the apps' template leaves out: they run, nothing of
# them is on the page
APP_HIDDEN = {"01_mechanisms.ipynb": ("Spot the bug", "Read it and find the leak", "Exercise 01.3",
                                      "The bug (open it after you tried)", "→ violates",
                                      "Not answered yet"),
              "07_showdown.ipynb": ("Like with like", "Not answered yet")}


@pytest.fixture(scope="module")
def apps_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("served_apps")
    for name in APP_HIDDEN:
        shutil.copy(NOTEBOOKS / name, root / name)
    shutil.copytree(NOTEBOOKS / "results", root / "results")
    tmp = tmp_path_factory.mktemp("voila_apps")
    shutil.copy(ROOT / "voila.json", tmp / "voila.json")           # Voilà reads it from its working dir
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = Server([sys.executable, "-m", "dpexplore.apps", "--no-browser", f"--port={port}",
                     "--Voila.ip=127.0.0.1", "--Voila.port_retries=0", "--show_tracebacks=True", str(root)],
                    url, f"{url}/", tmp)
    yield server
    server.stop()


@pytest.mark.parametrize("name", list(APP_HIDDEN))
def test_app_shows_no_exercise_prose(apps_server, page, screenshot_dir, name):
    page.goto(f"{apps_server.url}/voila/render/{name}", wait_until="load", timeout=240_000)
    page.locator(".widget-slider").first.wait_for(state="visible", timeout=120_000)
    text = page.inner_text("body")
    assert "Traceback" not in text and "There was an error when executing cell" not in text
    shown = [t for t in APP_HIDDEN[name] if t in text]
    assert not shown, f"the {name} app shows what only the lab needs: {shown}"
    assert page.locator(".celltag_lab-only, .celltag_exercise").count() == 0   # not even hidden
    assert not [t for t in APP_HIDDEN[name] if t in page.content()]
    if name.startswith("01"):
        anchor = page.get_by_text("the hardened one passes").first
        anchor.scroll_into_view_if_needed()
        page.screenshot(path=str(screenshot_dir / "lab_kit_voila_01.png"))
