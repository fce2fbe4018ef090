package data

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/envgap/envgap/schemas"
)

// Memo stages of the crawl's GitHub HTTP cache (crawl/ghhttp): answers by request, and
// the answers one crawl saw. The credential scan reads them too.
const (
	MemoGitHubHTTP  = "github-http"
	MemoGitHubCrawl = "github-crawl"
)

// MemoResults returns the distinct results recorded under a memo stage that are in the
// store, sorted.
func (s *Store) MemoResults(stage string) ([]schemas.Digest, error) {
	dir, err := s.memoPath(stage, schemas.Digest{})
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(filepath.Dir(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("memo %s: %w", stage, err)
	}
	seen := map[schemas.Digest]bool{}
	var out []schemas.Digest
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(dir), e.Name()))
		if err != nil {
			return nil, fmt.Errorf("memo %s/%s: %w", stage, e.Name(), err)
		}
		d, err := schemas.ParseDigest(strings.TrimSpace(string(b)))
		if err != nil || seen[d] || !s.Has(d) {
			continue
		}
		seen[d] = true
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hex() < out[j].Hex() })
	return out, nil
}
