package main

import (
	"github.com/envgap/envgap/verify"
)

// checkoutSource returns how verify materialises GitHub candidates (the crawl stage's
// checkout at base_commit, without later history).
func checkoutSource() verify.ProjectSource { return nil }
