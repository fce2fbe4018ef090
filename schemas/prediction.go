package schemas

import "sort"

// Prediction is one line of a predictions file: the new contents of environment files
// (null deletes a path), the agent's trajectory and its cost.
type Prediction struct {
	InstanceID string             `json:"instance_id"`
	Files      map[string]*string `json:"files"`
	Trajectory []any              `json:"trajectory"`
	CostUSD    *float64           `json:"cost_usd"`
}

// Overlay returns the prediction's files as an overlay (content nil deletes the path),
// sorted by path.
func (p *Prediction) Overlay() []File {
	paths := make([]string, 0, len(p.Files))
	for k := range p.Files {
		paths = append(paths, k)
	}
	sort.Strings(paths)
	out := make([]File, 0, len(paths))
	for _, k := range paths {
		out = append(out, File{Path: k, Content: p.Files[k]})
	}
	return out
}
