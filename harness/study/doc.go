// Package study computes the paper's metrics from a coding-agent study folder (envgap study
// report) and runs the paper's Gen/Repair protocol with an agent (envgap study run). The
// folder's layout is lib/studylayout's, the one crawl lite imports.
//
// # What each metric is computed over
//
// The primary instances are the main trial (trial 1): every metric but the intra-agent
// ones is over them. Per project: D1 is parsed from written/ (M(0)); D2 and D3 of a
// successful project (made_to_work) come from layers.json or from running its final state
// (repaired/, or written/ when it worked first time) through the core. Sets are compared by
// deps.Key (PEP 503 names, Maven artifactIds, C++ CMake names mapped to the libraries a
// trace sees); a C++ D2 is what the CMake configure found and fetched (core/deps.
// CMakeInstalled), D1 only where it was not measured (Project.D2FromD1). Options.Paper
// (and LoadOptions.Paper) takes the paper's way where envgap departs from it by choice.
//
// Success is the paper's: made to work within the budget k (Options.K, default 10); a
// project made to work after more than k rounds is a failure (bucket ">k") and out of
// every metric over successful projects.
//
//   - SR(0), SR(<=k), gain: shares of an (agent, language)'s projects that worked first
//     time / succeeded within the budget. Buckets: i* = 0, 1-3, 4-7, 8-10 (cut at k,
//     11-k above 10), ">k", failed, unknown (made to work, round not recorded). Failed
//     first, recovered within the budget, the recovery share, mean i* over the converged.
//   - phantom, hidden, bloat (eq. 4): means over successful projects with D2 and D3, each
//     rate 0 when its denominator is 0.
//   - rho = |D2|/|D1| over the same projects with |D1| > 0 (undefined otherwise, counted),
//     and Delta = |D2 \ D1|; C++ is marked excluded from cross-language transitive
//     analyses.
//   - Tables 1, 2 and 9: the problem list's domains, the study's scale, the problem list.
//   - P, R, F1 (eq. 5) per project with P = 1 when n1 = 0 < n3, R = 1 when n3 = 0 < n1,
//     projects with n1 = n3 = 0 excluded (counted); means per (agent, language) and per
//     language pooled over agents ("All").
//   - Jaccard (eq. 6, 1 when both empty, 0 when one is) of two agents' D1 on the same task
//     and language, over every task both did with D1 measured (successful or not: D1 is the
//     initial declaration); CDR the share of J = 0; macro CDR the mean over languages.
//   - intra-agent: for an agent with more than one trial in a language, over the tasks every
//     trial did: J of every pair of trials (mean and median over all pairs), UCR (all
//     trials' D1 identical), mean |union| and |intersection| of the trials' D1.
//   - SLAR, EGAR: of an agent's C++ projects that failed at round 0, the share whose error
//     is SystemLib, and of those the share made to work. The class is meta.json's
//     error_class, else ClassifyCPPError of round 0's error.
//   - Spearman's rho of |D1| against the round-0 success indicator per language over every
//     (agent, task) with D1, and its two-sided p-value (t distribution, as scipy).
//   - UDR: per (agent, language), of the tasks the problem list marks stdlib_sufficient in
//     that language, the share whose D1 is not empty; macro: mean over languages.
//   - most frequent phantom (D1 \ D3) and hidden (D3 \ D1) packages per language, ties
//     by name or first seen (Options.Ties).
//   - convergence by domain: SR(0), SR(<=k) per (agent, domain), pooled over languages.
//
// An undefined number (no projects, a zero denominator the paper does not set to zero) is
// null in JSON and "–" in Markdown. Projects left out are listed with the reason.
package study
