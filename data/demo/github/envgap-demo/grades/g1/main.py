#!/usr/bin/env python3
"""Prints the grade table of a small class: name and score."""

from tabulate import tabulate

SCORES = {"Ada": 93.5, "Grace": 88.0, "Linus": 71.25, "Margaret": 97.0}


def main():
    rows = sorted(SCORES.items())
    print(tabulate(rows, headers=("name", "score"), floatfmt=".1f"))


if __name__ == "__main__":
    main()
