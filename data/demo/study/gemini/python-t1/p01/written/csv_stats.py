#!/usr/bin/env python3
"""CSV Statistical Analyzer.

Reads a CSV file, detects its numeric columns and prints count, mean, median,
standard deviation, minimum and maximum for each of them as a table.

Usage:
    python3 csv_stats.py data/sample.csv [--delimiter ,]
"""

import argparse
import csv
import statistics
import sys

from tabulate import tabulate


def numeric_columns(rows, headers):
    """Return {column: [float values]} for the columns whose non-empty cells are all numbers."""
    columns = {}
    for i, name in enumerate(headers):
        values = []
        for row in rows:
            cell = row[i].strip() if i < len(row) else ""
            if cell == "":
                continue
            try:
                values.append(float(cell))
            except ValueError:
                values = None
                break
        if values:
            columns[name] = values
    return columns


def describe(values):
    return {
        "count": len(values),
        "mean": statistics.fmean(values),
        "median": statistics.median(values),
        "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
        "min": min(values),
        "max": max(values),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description="Summary statistics of the numeric columns of a CSV file")
    parser.add_argument("csv_file")
    parser.add_argument("--delimiter", default=",")
    args = parser.parse_args(argv)

    with open(args.csv_file, newline="", encoding="utf-8") as f:
        reader = csv.reader(f, delimiter=args.delimiter)
        headers = next(reader)
        rows = list(reader)

    columns = numeric_columns(rows, headers)
    if not columns:
        print("no numeric columns found", file=sys.stderr)
        return 1

    table = []
    for name, values in columns.items():
        s = describe(values)
        table.append([name, s["count"], s["mean"], s["median"], s["stdev"], s["min"], s["max"]])
    print(f"{args.csv_file}: {len(rows)} rows, {len(columns)} numeric columns")
    print(tabulate(table, headers=["column", "count", "mean", "median", "stdev", "min", "max"], floatfmt=".2f"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
