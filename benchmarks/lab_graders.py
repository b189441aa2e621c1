"""Seconds per check of the lab's graded exercises, and the graders' verdict table.

    python benchmarks/lab_graders.py              # seconds per check (the target: under 10 s on 2 cores)
    python benchmarks/lab_graders.py --verdicts   # every answer of tests/lab_examples.py × its verdict
    python benchmarks/lab_graders.py --verdicts --only 10.2 11.3   # some exercises only

The first check of an exercise in a session also runs the audit of its planted leak (cached
afterwards): the "first" column. Each answer is checked the way ``lab.check`` does it
(``lab.evaluate``). The verdict table lists the reference solution, its fair variants and the
regression set of answers that must be refused, with the start of the message a student sees.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from lab_examples import FAIR, REFERENCE, REFUSED  # noqa: E402

from dpexplore import lab  # noqa: E402

GRADED = ("01.3", "03.1", "05.5", "06.3", "10.2", "11.3", "12.2", "13.2", "14.4")


def _seconds(exercise_id: str, answer) -> tuple[float, str]:
    start = time.perf_counter()
    result = lab.evaluate(exercise_id, answer)
    return time.perf_counter() - start, result.status


def timings(exercises=GRADED) -> None:
    print(f"{'exercise':8s} {'answer':48s} {'verdict':8s} {'seconds':>8s}")
    for exercise_id in exercises:
        answers = [("reference (first check of the session)", REFERENCE[exercise_id]),
                   ("reference", REFERENCE[exercise_id])]
        answers += list(FAIR[exercise_id].items())
        answers += [(name, f) for name, f in list(REFUSED[exercise_id].items())[:4]]
        for name, answer in answers:
            seconds, status = _seconds(exercise_id, answer)
            print(f"{exercise_id:8s} {name[:48]:48s} {status:8s} {seconds:8.2f}")


def verdicts(exercises=GRADED) -> None:
    for exercise_id in exercises:
        rows = [("accept", "reference", REFERENCE[exercise_id])]
        rows += [("accept", name, f) for name, f in FAIR[exercise_id].items()]
        rows += [("refuse", name, f) for name, f in REFUSED[exercise_id].items()]
        for expected, name, answer in rows:
            start = time.perf_counter()
            result = lab.evaluate(exercise_id, answer)
            print(f"{exercise_id} | {expected} | {name} | {result.status} | {time.perf_counter() - start:.2f} s | "
                  f"{result.message[:160]}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verdicts", action="store_true", help="print the verdict table instead of timings")
    parser.add_argument("--only", nargs="+", default=GRADED, help="exercise ids (default: every graded one)")
    args = parser.parse_args()
    (verdicts if args.verdicts else timings)(tuple(args.only))
