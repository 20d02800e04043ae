package root

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/symcheck"
)

// GenerateDocs writes the markdown reference into dir/cli and man pages into
// dir/man for the whole command tree.
func GenerateDocs(dir string) error {
	io, _, _, _ := cli.Test()
	root := NewCmdRoot(io)
	disableAutoGen(root)
	md := filepath.Join(dir, "cli")
	man := filepath.Join(dir, "man")
	for _, d := range []string{md, man} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(root, md); err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.md"), []byte(symcheck.RulesMarkdown()), 0o644); err != nil {
		return err
	}
	hdr := &doc.GenManHeader{Title: "ROCMDOCTOR", Section: "1", Source: "rocmdoctor", Manual: "rocmdoctor manual"}
	if err := doc.GenManTree(root, hdr, man); err != nil {
		return fmt.Errorf("man: %w", err)
	}
	return nil
}

func disableAutoGen(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, s := range c.Commands() {
		disableAutoGen(s)
	}
}

func newCmdGenDocs(io *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:    "gen-docs DIR",
		Short:  "Generate the markdown and man-page reference into DIR",
		Hidden: true,
		Args:   cli.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := GenerateDocs(args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(io.Out, "wrote %s/cli and %s/man\n", args[0], args[0])
			return err
		},
	}
}
