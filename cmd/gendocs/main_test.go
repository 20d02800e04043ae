package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDocsCurrent regenerates the CLI reference and compares it with docs/.
// Regenerate with: go run ./cmd/gendocs docs
func TestDocsCurrent(t *testing.T) {
	tmp := t.TempDir()
	if err := GenerateDocs(tmp); err != nil {
		t.Fatal(err)
	}
	repoDocs := filepath.Join("..", "..", "docs")
	for _, sub := range []string{"cli", "man"} {
		gen, _ := filepath.Glob(filepath.Join(tmp, sub, "*"))
		have, _ := filepath.Glob(filepath.Join(repoDocs, sub, "*"))
		if len(gen) == 0 {
			t.Fatalf("no %s docs generated", sub)
		}
		if len(gen) != len(have) {
			t.Errorf("docs/%s has %d files, generator writes %d: run go run ./cmd/gendocs docs", sub, len(have), len(gen))
		}
		for _, g := range gen {
			want, _ := os.ReadFile(g)
			got, err := os.ReadFile(filepath.Join(repoDocs, sub, filepath.Base(g)))
			if err != nil || string(got) != string(want) {
				t.Errorf("docs/%s/%s is stale or missing: run go run ./cmd/gendocs docs", sub, filepath.Base(g))
			}
		}
	}
}
