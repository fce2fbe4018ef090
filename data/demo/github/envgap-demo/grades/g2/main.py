#!/usr/bin/env python3
"""Prints the grade table of a small class: name, score and letter grade."""

from tabulate import tabulate

SCORES = {"Ada": 93.5, "Grace": 88.0, "Linus": 71.25, "Margaret": 97.0}


def letter(score):
    for bound, grade in ((90, "A"), (80, "B"), (70, "C"), (60, "D")):
        if score >= bound:
            return grade
    return "F"


def main():
    rows = [(name, score, letter(score)) for name, score in sorted(SCORES.items())]
    print(tabulate(rows, headers=("name", "score", "grade"), floatfmt=".1f"))


if __name__ == "__main__":
    main()
