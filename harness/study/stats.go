package study

import (
	"math"
	"sort"
)

// mean returns the mean of xs, or nil when there are none.
func mean(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	return &m
}

// quantile returns the q-quantile of sorted xs by linear interpolation between closest
// ranks (numpy's default, R's type 7).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	h := q * float64(len(sorted)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-lo)*(sorted[i+1]-sorted[i])
}

// median returns the median of xs, or nil when there are none.
func median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	m := quantile(s, 0.5)
	return &m
}

// ranks returns the ranks of xs (1-based), ties getting the mean of their ranks.
func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = avg
		}
		i = j + 1
	}
	return r
}

// pearson returns the Pearson correlation of x and y, ok false when either is constant.
func pearson(x, y []float64) (float64, bool) {
	n := float64(len(x))
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= n
	my /= n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0, false
	}
	r := sxy / math.Sqrt(sxx*syy)
	return math.Max(-1, math.Min(1, r)), true
}

// Spearman returns Spearman's rank correlation of x and y (the Pearson correlation of
// their ranks, ties ranked by their mean rank) and its two-sided p-value from Student's t
// distribution with n-2 degrees of freedom, t = rho*sqrt((n-2)/(1-rho^2)): the same as
// scipy.stats.spearmanr. ok is false when it is undefined (fewer than 3 pairs, or x or y
// constant).
func Spearman(x, y []float64) (rho, p float64, ok bool) {
	if len(x) != len(y) || len(x) < 3 {
		return 0, 0, false
	}
	rho, ok = pearson(ranks(x), ranks(y))
	if !ok {
		return 0, 0, false
	}
	df := float64(len(x) - 2)
	if math.Abs(rho) >= 1 {
		return rho, 0, true
	}
	t := rho * math.Sqrt(df/((1-rho)*(1+rho)))
	// Two-sided p = I_{df/(df+t^2)}(df/2, 1/2).
	p = regIncBeta(df/2, 0.5, df/(df+t*t))
	return rho, p, true
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), by the continued
// fraction of Numerical Recipes (betacf), accurate to about 1e-14.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lga, _ := math.Lgamma(a)
	lgb, _ := math.Lgamma(b)
	lgab, _ := math.Lgamma(a + b)
	front := math.Exp(lgab - lga - lgb + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betacf(a, b, x) / a
	}
	return 1 - front*betacf(b, a, 1-x)/b
}

func betacf(a, b, x float64) float64 {
	const (
		maxIter = 300
		eps     = 1e-15
		fpmin   = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < fpmin {
		d = fpmin
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < fpmin {
			d = fpmin
		}
		c = 1 + aa/c
		if math.Abs(c) < fpmin {
			c = fpmin
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < fpmin {
			d = fpmin
		}
		c = 1 + aa/c
		if math.Abs(c) < fpmin {
			c = fpmin
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
