package gitfetch

import (
	"errors"
	"testing"
)

func TestTransient(t *testing.T) {
	for _, c := range []struct {
		err  string
		want bool
	}{
		{"sending done message: write |1: broken pipe", true},
		{"read tcp 10.0.0.1:443: connection reset by peer", true},
		{"unexpected EOF", true},
		{"remote repository is empty", false},
		{"not our ref 34c990f4e88ac28efb25c49960118a3843b2fafd", false},
		{"authentication required", false},
	} {
		if got := transient(errors.New(c.err)); got != c.want {
			t.Errorf("transient(%q) = %v, want %v", c.err, got, c.want)
		}
	}
}
