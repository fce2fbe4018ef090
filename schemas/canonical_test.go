package schemas

import (
	"strings"
	"testing"
)

func TestCanonicalIsFormatIndependent(t *testing.T) {
	a, err := CanonicalizeJSON([]byte(`{"b": [1, 2.5, "x<y>&"], "a": {"d": null, "c": true}}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := CanonicalizeJSON([]byte("{\n  \"a\": {\"c\": true, \"d\": null},\n  \"b\": [1,2.5,\"x<y>&\"]\n}"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":{"c":true,"d":null},"b":[1,2.5,"x<y>&"]}`
	if string(a) != want || string(b) != want {
		t.Errorf("got %s and %s, want %s", a, b, want)
	}
	if _, err := CanonicalizeJSON([]byte("{\"a\":\"\xff\"}")); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if _, err := CanonicalizeJSON([]byte(`{} {}`)); err == nil {
		t.Error("trailing data accepted")
	}
}

func TestDigestRoundTrip(t *testing.T) {
	d := Hash([]byte("hello"))
	if d.String() != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("digest of hello: %s", d)
	}
	p, err := ParseDigest(d.String())
	if err != nil || p != d {
		t.Fatalf("parse: %v", err)
	}
	for _, bad := range []string{"", "sha256:", "md5:" + d.Hex(), "sha256:" + strings.ToUpper(d.Hex()), "sha256:" + d.Hex()[:63] + "g"} {
		if _, err := ParseDigest(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	h := NewHasher()
	h.Write([]byte("hel"))
	h.Write([]byte("lo"))
	if h.Digest() != d {
		t.Error("streamed hash differs")
	}
}

func TestCorpusID(t *testing.T) {
	cands, _, _ := ReadCandidates("in.jsonl", strings.NewReader(goodCandidate))
	t1 := cands[0].ToTask()
	t2 := t1
	t2.InstanceID, t2.IssueNumber = "envgap__Ezibenroc__PyRoaringBitMap-94", 94
	id1, err := CorpusID([]Task{t1, t2})
	if err != nil {
		t.Fatal(err)
	}
	id2, _ := CorpusID([]Task{t2, t1})
	if id1 != id2 || len(id1) != 12 {
		t.Fatalf("order changed the id: %s %s", id1, id2)
	}
	t3 := t2
	t3.ProblemStatement += "."
	id3, _ := CorpusID([]Task{t1, t3})
	if id3 == id1 {
		t.Error("a one-character edit did not change the id")
	}
	reason, since := "broken", "2026-09-29T00:00:00Z"
	t4 := t2
	t4.ExcludedFromScoring, t4.ExclusionReason, t4.ExcludedSince = true, &reason, &since
	if id4, _ := CorpusID([]Task{t1, t4}); id4 == id1 {
		t.Error("an exclusion did not change the id")
	}
	if _, err := CorpusID([]Task{t1, t1}); err == nil {
		t.Error("duplicate task accepted")
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,null,"x"]}`))
	f.Add([]byte(`[1e3, -0.5, "\u00e9"]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		c1, err := CanonicalizeJSON(in)
		if err != nil {
			return
		}
		c2, err := CanonicalizeJSON(c1)
		if err != nil {
			t.Fatalf("canonical output does not parse: %v", err)
		}
		if string(c1) != string(c2) {
			t.Fatalf("not idempotent: %s vs %s", c1, c2)
		}
	})
}

func TestCanonicalFastPathMatchesTreePath(t *testing.T) {
	cands, _, _ := ReadCandidates("in.jsonl", strings.NewReader(goodCandidate))
	task := cands[0].ToTask()
	s := "ctl\x01 \u2028 <html> \"q\" \\ é 😀"
	task.ProblemStatement = s
	task.ExclusionReason = &s
	v := Verdict{Kind: "verdict", Key: Hash([]byte("k")), Before: []Digest{Hash([]byte("b"))}, Outcome: OutcomeVerified}
	pred := Prediction{InstanceID: "x", Files: map[string]*string{"b": nil, "a": &s}}
	type inner struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
		C string
	}
	type Inner2 struct{ D string }
	embedded := struct {
		inner
		*Inner2
		A string `json:"a"`
		X string `json:"x"`
	}{inner{A: "hidden", B: 2, C: "c"}, nil, "outer", "x"}
	embedded2 := struct {
		*Inner2
		Y int
	}{&Inner2{D: "d"}, 1}
	for _, val := range []any{embedded, embedded2, &task, task, &cands[0], v, pred, []any{1, "x", nil}, map[string]any{"z": 1.5, "a": []int{}}} {
		fast, err := Canonical(val)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := marshalNoEscape(val)
		slow, err := CanonicalizeJSON(raw)
		if err != nil {
			t.Fatal(err)
		}
		if string(fast) != string(slow) {
			t.Errorf("fast and tree paths differ:\n%s\n%s", fast, slow)
		}
	}
	if _, err := Canonical(struct{ S string }{"\xff"}); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}
