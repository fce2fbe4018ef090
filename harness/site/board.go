package site

import (
	"sort"

	"github.com/envgap/envgap/harness/report"
	"github.com/envgap/envgap/schemas"
)

// Sets are the boards, in the order the site shows them.
var Sets = []schemas.Source{schemas.SourceReported, schemas.SourceRepaired, schemas.SourceLite}

// BoardRow is one result folder on one board: report.BuildReport's row and its rank.
type BoardRow struct {
	Rank int
	// Tied: another row has the same first-attempt score (and so the same rank).
	Tied bool
	Name string
	Row  report.ReportRow
	// Run is the result folder's run page, relative to the site's root (runs.go).
	Run string
}

// Board is one set's leaderboard.
type Board struct {
	Set  schemas.Source
	Rows []BoardRow
	// Tasks counts the release's tasks of the set.
	Tasks int
}

// Leaderboard is every board of the release and the result folders kept apart.
type Leaderboard struct {
	CorpusID string
	Boards   []Board
	// Other are the folders scored on another corpus id: shown apart, never ranked.
	Other []BoardRow
}

// setFolder is the part of a result folder that falls on one set: the same folder when its
// split is the set, else its results, excluded ids and faults of that set's tasks.
func setFolder(f *report.ResultFolder, set schemas.Source, setOf map[string]schemas.Source) *report.ResultFolder {
	if f.Summary.Split == string(set) {
		return f
	}
	sub := &report.ResultFolder{Dir: f.Dir, Summary: f.Summary}
	sub.Summary.Split = string(set)
	sub.Summary.ExcludedIDs, sub.Summary.Faults = nil, nil
	ids := map[string]bool{}
	for _, r := range f.Results {
		if setOf[r.InstanceID] == set {
			sub.Results = append(sub.Results, r)
			ids[r.InstanceID] = true
		}
	}
	for _, id := range f.Summary.ExcludedIDs {
		if setOf[id] == set {
			sub.Summary.ExcludedIDs = append(sub.Summary.ExcludedIDs, id)
		}
	}
	for _, x := range f.Summary.Faults {
		if setOf[x.InstanceID] == set {
			sub.Summary.Faults = append(sub.Summary.Faults, x)
			ids[x.InstanceID] = true
		}
	}
	sub.Summary.Tasks = len(ids)
	return sub
}

// BuildLeaderboard computes the boards: for each set, a row per result folder scored on
// the release's corpus id that has tasks of that set, ranked by the first-attempt resolved
// share (equal shares share a rank). The numbers are report.BuildReport's.
func BuildLeaderboard(rel *Release, results []*Results) *Leaderboard {
	setOf := map[string]schemas.Source{}
	inSet := map[schemas.Source]int{}
	for _, t := range rel.Tasks {
		setOf[t.InstanceID] = t.Source
		inSet[t.Source]++
	}
	lb := &Leaderboard{CorpusID: rel.CorpusID}
	var mine []*Results
	for _, r := range results {
		if r.Folder.Summary.CorpusID != rel.CorpusID {
			row := report.BuildReport([]*report.ResultFolder{r.Folder}).Rows[0]
			lb.Other = append(lb.Other, BoardRow{Name: r.Name, Row: row})
			continue
		}
		mine = append(mine, r)
	}
	for _, set := range Sets {
		b := Board{Set: set, Tasks: inSet[set]}
		for _, r := range mine {
			sub := setFolder(r.Folder, set, setOf)
			if sub.Summary.Tasks == 0 && len(sub.Results) == 0 {
				continue
			}
			row := report.BuildReport([]*report.ResultFolder{sub}).Rows[0]
			b.Rows = append(b.Rows, BoardRow{Name: r.Name, Row: row})
		}
		rank(b.Rows)
		lb.Boards = append(lb.Boards, b)
	}
	return lb
}

// rank sorts rows by first-attempt share (highest first; then agent and folder name) and
// gives equal shares the same rank (1, 1, 3).
func rank(rows []BoardRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Row.Resolved.Share != b.Row.Resolved.Share {
			return a.Row.Resolved.Share > b.Row.Resolved.Share
		}
		if a.Row.Agent != b.Row.Agent {
			return a.Row.Agent < b.Row.Agent
		}
		return a.Name < b.Name
	})
	for i := range rows {
		if i > 0 && rows[i].Row.Resolved.Share == rows[i-1].Row.Resolved.Share {
			rows[i].Rank = rows[i-1].Rank
			rows[i].Tied, rows[i-1].Tied = true, true
		} else {
			rows[i].Rank = i + 1
		}
	}
}
