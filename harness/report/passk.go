package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// PassEstimator names how PassAtK is computed, for every place that shows it.
const PassEstimator = "pass@1 is the mean share of a task's runs resolved at the first attempt; pass@k the unbiased estimator of Chen et al. (2021), 1 - C(n-c,k)/C(n,k) for c of n runs resolved; pass^k (every one of k runs resolves, Yao et al. 2024) C(c,k)/C(n,k); each averaged over the tasks, with a 95% percentile bootstrap interval over tasks (2,000 resamples, fixed seed)"

// bootstrapResamples and bootstrapSeed fix the intervals, so one folder always gives the
// same numbers.
const (
	bootstrapResamples = 2000
	bootstrapSeed      = 20210707
)

// Interval is an estimate with its 95% interval.
type Interval struct {
	Value float64 `json:"value"`
	Low   float64 `json:"low"`
	High  float64 `json:"high"`
}

// PassAtK are the figures of a run with k runs per task (envgap run --k above 1), on the
// first attempt of each run (the ranked setting): pass@1, pass@k and pass^k.
type PassAtK struct {
	K        int      `json:"k"`
	Tasks    int      `json:"tasks"`
	Pass1    Interval `json:"pass_at_1"`
	PassK    Interval `json:"pass_at_k"`
	PassHatK Interval `json:"pass_hat_k"`
	// Estimator says how they are computed (PassEstimator).
	Estimator string `json:"estimator"`
}

// choose is the binomial coefficient C(n, k) as a float (0 when k > n).
func choose(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// passAt is the unbiased pass@k of one task with c of n runs resolved (k capped at n).
func passAt(n, c, k int) float64 {
	k = min(k, n)
	if n-c < k {
		return 1
	}
	return 1 - choose(n-c, k)/choose(n, k)
}

// passHat is pass^k of one task: the chance that k runs drawn without replacement all
// resolve (k capped at n).
func passHat(n, c, k int) float64 {
	k = min(k, n)
	return choose(c, k) / choose(n, k)
}

// passAtK computes the figures over tasks given as (runs, resolved first attempts).
func passAtK(k int, runs [][2]int) *PassAtK {
	if k <= 1 || len(runs) == 0 {
		return nil
	}
	one, at, hat := make([]float64, len(runs)), make([]float64, len(runs)), make([]float64, len(runs))
	for i, nc := range runs {
		n, c := nc[0], nc[1]
		one[i], at[i], hat[i] = float64(c)/float64(n), passAt(n, c, k), passHat(n, c, k)
	}
	iv := bootstrap(one, at, hat)
	return &PassAtK{K: k, Tasks: len(runs), Pass1: iv[0], PassK: iv[1], PassHatK: iv[2], Estimator: PassEstimator}
}

// bootstrap is the mean of each series (one value a task, the series of one length) with
// its 95% percentile interval, from one set of resamples of the tasks shared by the series.
func bootstrap(series ...[]float64) []Interval {
	n := len(series[0])
	out := make([]Interval, len(series))
	means := make([][]float64, len(series))
	for s, xs := range series {
		sum := 0.0
		for _, x := range xs {
			sum += x
		}
		out[s].Value = sum / float64(n)
		means[s] = make([]float64, bootstrapResamples)
	}
	rng := rand.New(rand.NewPCG(bootstrapSeed, uint64(n)))
	sums := make([]float64, len(series))
	for b := 0; b < bootstrapResamples; b++ {
		clear(sums)
		for range n {
			i := rng.IntN(n)
			for s, xs := range series {
				sums[s] += xs[i]
			}
		}
		for s := range series {
			means[s][b] = sums[s] / float64(n)
		}
	}
	for s := range series {
		sort.Float64s(means[s])
		out[s].Low = means[s][int(math.Floor(0.025*float64(bootstrapResamples)))]
		out[s].High = means[s][int(math.Ceil(0.975*float64(bootstrapResamples)))-1]
	}
	return out
}

func (iv Interval) text() string {
	return fmt.Sprintf("%.1f%% [%.1f, %.1f]", 100*iv.Value, 100*iv.Low, 100*iv.High)
}

// Text is the figures in one line, for people.
func (p *PassAtK) Text() string {
	return fmt.Sprintf("pass@1 %s, pass@%d %s, pass^%d %s over %d tasks", p.Pass1.text(), p.K, p.PassK.text(), p.K, p.PassHatK.text(), p.Tasks)
}
