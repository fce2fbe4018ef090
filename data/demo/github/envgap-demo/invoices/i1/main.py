#!/usr/bin/env python3
"""Prints the lines of an invoice with their amounts, and the total."""

from tabulate import tabulate

LINES = [
    ("Consulting, March", 12, 95.0),
    ("Travel", 1, 212.4),
    ("Licence renewal", 3, 49.99),
]


def main():
    rows = [(item, qty, price, qty * price) for item, qty, price in LINES]
    total = sum(row[3] for row in rows)
    rows.append(("total", "", "", total))
    print(tabulate(rows, headers=("item", "qty", "price", "amount")))


if __name__ == "__main__":
    main()
