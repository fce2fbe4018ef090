// Package report is the leaderboard of envgap eval and envgap run: it reads result folders
// back (ReadResultFolder: the summary and each result line's figures) and computes one row a
// folder (BuildReport: tasks scored and excluded, resolved rates of repairs and controls,
// manifest F1, safe install, rejected, leaked and uninspected attempts, cost), which it writes
// as Markdown (Leaderboard.Markdown) or a PNG chart (ReportChart). `envgap report` prints it
// and the website (harness/site) shows the same rows.
package report
