package schemas

import (
	"bytes"
	"fmt"
	"sort"
)

// CorpusID returns the 12-hex-digit id of a task set. It is the first 12 hex digits of the
// SHA-256 of the task rows' canonical JSON (every column of the card, keys sorted, no
// whitespace, non-ASCII not escaped), sorted bytewise, each followed by a newline (the
// document docs/corpus-id.md spells it out). It depends on the rows'
// content only: not on their order, their JSON formatting or the machine; any change to any
// field of any row (exclusion fields included) changes it.
func CorpusID(tasks []Task) (string, error) {
	lines := make([][]byte, 0, len(tasks))
	ids := make(map[string]bool, len(tasks))
	for i := range tasks {
		if ids[tasks[i].InstanceID] {
			return "", fmt.Errorf("corpus id: task %s appears twice", tasks[i].InstanceID)
		}
		ids[tasks[i].InstanceID] = true
		b, err := Canonical(&tasks[i])
		if err != nil {
			return "", fmt.Errorf("corpus id: task %s: %w", tasks[i].InstanceID, err)
		}
		lines = append(lines, b)
	}
	sort.Slice(lines, func(i, j int) bool { return bytes.Compare(lines[i], lines[j]) < 0 })
	h := NewHasher()
	for _, l := range lines {
		h.Write(l)
		h.Write([]byte{'\n'})
	}
	return h.Digest().Hex()[:12], nil
}
