// Command gendocs writes the markdown and man-page reference of rocmdoctor
// into a directory:
//
//	go run ./cmd/gendocs docs
//
// It is a separate program so that the documentation generator (cobra/doc
// and its markdown and YAML libraries) is not linked into, or initialised
// by, every rocmdoctor invocation.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/schema"
	"github.com/rocmdoctor/rocmdoctor/finding"
)

// GenerateDocs writes the markdown reference into dir/cli and man pages into
// dir/man for the whole command tree.
func GenerateDocs(dir string) error {
	io, _, _, _ := cli.Test()
	top := root.NewCmdRoot(io)
	disableAutoGen(top)
	md := filepath.Join(dir, "cli")
	man := filepath.Join(dir, "man")
	for _, d := range []string{md, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(top, md); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.md"), []byte(finding.RulesMarkdown()), 0o644); err != nil {
		return err
	}
	if err := writeSchemas(filepath.Join(dir, "schema")); err != nil {
		return err
	}
	hdr := &doc.GenManHeader{Title: "ROCMDOCTOR", Section: "1", Source: "rocmdoctor", Manual: "rocmdoctor manual"}
	if err := doc.GenManTree(top, hdr, man); err != nil {
		return fmt.Errorf("man: %w", err)
	}
	return nil
}

// writeSchemas writes the JSON Schema of each command's --json output.
func writeSchemas(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, v := range root.JSONOutputs() {
		b, err := schema.Marshal("rocmdoctor "+strings.ReplaceAll(name, "-", " ")+" --json", v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".schema.json"), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func disableAutoGen(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, s := range c.Commands() {
		disableAutoGen(s)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gendocs DIR")
		os.Exit(2)
	}
	if err := GenerateDocs(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s/cli, %s/man and %s/rules.md\n", os.Args[1], os.Args[1], os.Args[1])
}
