package check

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// walkParallel lists the same files in the same order as a serial
// filepath.WalkDir (check keeps the first path of a hard-linked file in
// walk order), whatever the directories finish first; symbolic links below
// the root are not followed.
func TestWalkParallelOrder(t *testing.T) {
	root := t.TempDir()
	testenv.EmptyFiles(t, root, "a.so", "b/x.so", "b/c/y.so", "b/c/z", "ba.so", "c/d/e/f.so", "z.so", "b0/w", "B/q")
	if err := os.Symlink(filepath.Join(root, "b"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	var want []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			want = append(want, p)
		}
		return nil
	})
	for range 20 {
		got, err := walkParallel(context.Background(), root)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, c := range got {
			paths = append(paths, c.path)
			if c.root != root {
				t.Fatalf("%s: root %s, want %s", c.path, c.root, root)
			}
		}
		if !slices.Equal(paths, want) {
			t.Fatalf("walk order\n%v\nwant\n%v", paths, want)
		}
	}
}
