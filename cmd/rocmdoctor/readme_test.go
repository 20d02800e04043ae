package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// The examples of the README and docs/ are real: each ```console block's
// command runs on the shipped fixtures, from the repository's root, and
// prints the lines shown (standard output; the checkout's absolute path
// read as relative).
func TestREADMEExamples(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	t.Chdir(repo)
	for _, doc := range append([]string{filepath.Join(repo, "README.md")}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		n := checkExamples(t, repo, filepath.Base(doc), string(b))
		if doc == filepath.Join(repo, "README.md") && n < 4 {
			t.Fatalf("%d examples in README.md", n)
		}
	}
}

// checkExamples runs the console blocks of doc and returns how many.
func checkExamples(t *testing.T, repo, name, doc string) int {
	t.Helper()
	n := 0
	for _, block := range strings.Split(doc, "```console\n")[1:] {
		body, _, ok := strings.Cut(block, "```")
		if !ok {
			t.Fatalf("an unterminated console block: %q", block)
		}
		cmdLine, want, _ := strings.Cut(body, "\n")
		args, ok := strings.CutPrefix(cmdLine, "$ rocmdoctor ")
		if !ok {
			t.Fatalf("a console block that does not start with $ rocmdoctor: %q", cmdLine)
		}
		io, _, out, _ := cli.Test()
		root.Run(io, strings.Fields(args))
		got := strings.ReplaceAll(out.String(), repo+"/", "")
		if got != want {
			t.Errorf("%s: $ rocmdoctor %s\ngot:\n%s\nit shows:\n%s", name, args, got, want)
		}
		n++
	}
	return n
}
