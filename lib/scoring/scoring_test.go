package scoring

import (
	"strings"
	"testing"
	"text/template"
)

func TestParagraphs(t *testing.T) {
	for _, name := range Paragraphs {
		p, err := Paragraph(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(p) == "" || strings.Contains(p, "{{") || strings.HasSuffix(p, "\n") {
			t.Errorf("%s renders %q: want one paragraph without a trailing newline", name, p)
		}
	}
	if _, err := Paragraph("scoring-nope"); err == nil {
		t.Error("an unknown paragraph renders")
	}
}

// AddTo gives an including template the paragraphs and leaves its own text alone.
func TestAddToKeepsTheIncluder(t *testing.T) {
	tm, err := AddTo(template.Must(template.New("card").Parse(`# Card\n\n{{template "scoring-controls"}}\n`)))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := tm.Execute(&b, nil); err != nil {
		t.Fatal(err)
	}
	want, _ := Paragraph("scoring-controls")
	if got := b.String(); got != `# Card\n\n`+want+`\n` {
		t.Errorf("card = %q", got)
	}
}
