package demo

import (
	"fmt"
	"time"
)

//go:generate go run ./genpypi

// tabulateModule is the demo's stand-in for tabulate: the one function the demo projects
// call, tabulate(rows, headers, floatfmt), printing the "simple" table format.
const tabulateModule = `"""Stand-in for tabulate served by envgap's demo package index (not the real package).

Only tabulate(rows, headers=(), tablefmt="simple", floatfmt="g") is provided.
"""

__version__ = "%s"


def _cell(value, floatfmt):
    if isinstance(value, float):
        return format(value, floatfmt)
    return str(value)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def tabulate(tabular_data, headers=(), tablefmt="simple", floatfmt="g", **kwargs):
    rows = [list(row) for row in tabular_data]
    headers = [str(h) for h in headers]
    cells = [[_cell(v, floatfmt) for v in row] for row in rows]
    ncols = max([len(headers)] + [len(r) for r in cells] + [0])
    widths = [0] * ncols
    for r in ([headers] if headers else []) + cells:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    numeric = [all(_is_number(row[i]) for row in rows if i < len(row)) for i in range(ncols)]

    def line(values):
        out = []
        for i in range(ncols):
            v = values[i] if i < len(values) else ""
            out.append(v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = []
    if headers:
        lines.append(line(headers))
        lines.append("  ".join("-" * w for w in widths))
    lines.extend(line(r) for r in cells)
    return "\n".join(lines)
`

// Packages returns the releases of the fixture index.
func Packages() []Package {
	tab := func(version string, uploaded time.Time) Package {
		return Package{Name: "tabulate", Version: version, RequiresPython: ">=3.7", UploadTime: uploaded,
			Summary: "envgap demo stand-in for tabulate (not the real package)",
			Module:  fmt.Sprintf(tabulateModule, version)}
	}
	return []Package{
		tab("0.8.10", time.Date(2022, 6, 21, 9, 47, 11, 0, time.UTC)),
		tab("0.9.0", time.Date(2022, 10, 6, 17, 37, 4, 0, time.UTC)),
	}
}
