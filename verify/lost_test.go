package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/envgap/envgap/core"
	"github.com/envgap/envgap/core/registry"
	"github.com/envgap/envgap/data/catalog"
	"github.com/envgap/envgap/schemas"
)

// A verdict whose run lost a step's output is decided again by a verify of its id (not
// taken from the memo), and the store is whole afterwards.
func TestLostRunIsRunAgain(t *testing.T) {
	dir := t.TempDir()
	st, _ := catalog.Open(dir)
	cands := benchCandidates(1)
	if _, err := st.AddCandidateSet("test", "test", cands, nil); err != nil {
		t.Fatal(err)
	}
	proxy, err := registry.New(registry.Options{NPMUpstream: "http://127.0.0.1:1/"})
	if err != nil {
		t.Fatal(err)
	}
	fr := &fakeRunner{}
	stage := &Stage{Store: st, Cores: []*core.Core{{Runner: fr, Proxy: proxy, ProxyURL: "http://127.0.0.1:1", Store: st}}}
	ctx := context.Background()
	id := cands[0].InstanceID
	if rep, err := stage.Run(ctx, Options{}); err != nil || rep.Ran != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	v, vd, err := st.Verdict(id)
	if err != nil {
		t.Fatal(err)
	}
	var run schemas.Run
	if err := st.GetJSON(v.Before[0], &run); err != nil {
		t.Fatal(err)
	}
	out := run.Steps[len(run.Steps)-1].Output
	os.Remove(filepath.Join(dir, "objects", out.Hex()[:2], out.Hex()[2:]))
	if rep, _ := st.Fsck(ctx); rep.Clean() {
		t.Fatal("fsck misses the lost output")
	}
	runs := fr.runs.Load()
	rep, err := stage.Run(ctx, Options{IDs: []string{id}})
	if err != nil || rep.Ran != 1 || rep.Failed != 0 {
		t.Fatalf("verify again: %+v %v", rep, err)
	}
	if fr.runs.Load() == runs {
		t.Error("nothing ran again")
	}
	v2, vd2, err := st.Verdict(id)
	if err != nil || vd2 == vd || v2.Outcome != v.Outcome || v2.Previous != vd {
		t.Errorf("new verdict %s (previous %s), old %s: %v", vd2.Short(), v2.Previous.Short(), vd.Short(), err)
	}
	if rep, err := st.Fsck(ctx); err != nil || !rep.Clean() {
		t.Errorf("fsck after verify again: %v %+v", err, rep.Damage)
	}
}
