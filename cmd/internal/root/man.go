package root

import (
	"fmt"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/docs"
	"github.com/rocmdoctor/rocmdoctor/internal/safefile"
)

func newCmdMan(io *cli.IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Install the man pages (section 1) into a directory",
		Long: `Write the man pages of every command, as this binary was built with them,
into DIR (created if missing; pages already there are replaced atomically).
For a package: rocmdoctor man $out/share/man/man1`,
		Example: `  rocmdoctor man /usr/local/share/man/man1`,
		Args:    cli.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, err := installMan(args[0])
			if err != nil {
				return err
			}
			cli.Printf(io.Out, "wrote %d man pages to %s\n", n, args[0])
			return nil
		},
	}
}

// installMan writes the embedded man pages into dir.
func installMan(dir string) (int, error) {
	pages, err := docs.Man.ReadDir("man")
	if err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	for _, p := range pages {
		data, err := docs.Man.ReadFile(path.Join("man", p.Name()))
		if err != nil {
			return 0, err
		}
		if err := safefile.WriteFile(filepath.Join(dir, p.Name()), data, 0o644); err != nil {
			return 0, fmt.Errorf("%s: %w", filepath.Join(dir, p.Name()), err)
		}
	}
	return len(pages), nil
}
