package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
)

// The README's examples are real: each ```console block's command runs on
// the shipped fixtures, from the repository's root, and prints the lines
// shown (standard output; the checkout's absolute path read as relative).
func TestREADMEExamples(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(repo)
	n := 0
	for _, block := range strings.Split(string(b), "```console\n")[1:] {
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
			t.Errorf("README: $ rocmdoctor %s\ngot:\n%s\nthe README shows:\n%s", args, got, want)
		}
		n++
	}
	if n < 4 {
		t.Fatalf("%d examples in README.md", n)
	}
}
