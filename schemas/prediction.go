package schemas

// Prediction is one line of a predictions file: the new contents of environment files
// (null deletes a path), the agent's trajectory and its cost.
type Prediction struct {
	InstanceID string             `json:"instance_id"`
	Files      map[string]*string `json:"files"`
	Trajectory []any              `json:"trajectory"`
	CostUSD    *float64           `json:"cost_usd"`
}
