package schemas

import "testing"

func TestProposalApply(t *testing.T) {
	s := func(v string) *string { return &v }
	c := Candidate{}
	c.ResolveCommand, c.RunCommand, c.MadeBy = "pip install .", "python3 -m app", "maintainer fix"
	p := Proposal{MadeBy: MadeByAIAssistant, GoldFiles: []File{{Path: "requirements.txt", Content: s("x==1\n")}},
		Patch: "diff", Commands: &ProposedCommands{RunCommand: "python3 main.py"}}
	got := p.Apply(c)
	if got.RunCommand != "python3 main.py" || got.ResolveCommand != "pip install ." || got.MadeBy != MadeByAIAssistant ||
		len(got.GoldFiles) != 1 || got.Patch != "diff" {
		t.Errorf("Apply: %+v", got)
	}
	r := p.ApplyRecipe(Recipe{ResolveCommand: "a", RunCommand: "b", Generated: true})
	if r.RunCommand != "python3 main.py" || r.ResolveCommand != "a" || r.Generated {
		t.Errorf("ApplyRecipe: %+v", r)
	}
	none := Proposal{}
	if r := none.ApplyRecipe(Recipe{RunCommand: "b", Generated: true}); r.RunCommand != "b" || !r.Generated {
		t.Errorf("ApplyRecipe without commands: %+v", r)
	}
	if !(*ProposedCommands)(nil).Empty() || (&ProposedCommands{RunCommand: "x"}).Empty() {
		t.Error("Empty")
	}
}
