package walk

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

func TestDirFollowsALinkedRootOnly(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "rocm-6.2.0")
	testenv.EmptyFiles(t, real, "lib/libamdhip64.so.6", "bin/hipcc", "lib/cmake/x.cmake")
	// A link below the root: not followed.
	if err := os.Symlink(filepath.Join(real, "lib"), filepath.Join(real, "lib64")); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "rocm")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	list := func(root string) (out []string) {
		err := Dir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if d.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				out = append(out, filepath.ToSlash(rel))
			}
			if d.Type()&fs.ModeSymlink != 0 && p != root {
				out = append(out, "link:"+d.Name())
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := []string{"bin/hipcc", "lib/cmake/x.cmake", "lib/libamdhip64.so.6", "link:lib64"}
	if got := list(real); !slices.Equal(got, want) {
		t.Errorf("the directory: %v, want %v", got, want)
	}
	if got := list(link); !slices.Equal(got, want) {
		t.Errorf("through the link %s: %v, want %v", link, got, want)
	}
	// A link to a file is visited as filepath.WalkDir visits it.
	f := filepath.Join(dir, "file")
	if err := os.Symlink(filepath.Join(real, "bin/hipcc"), f); err != nil {
		t.Fatal(err)
	}
	n := 0
	Dir(f, func(p string, d fs.DirEntry, err error) error {
		if p != f || d.Type()&fs.ModeSymlink == 0 {
			t.Errorf("a link to a file: %s %v", p, d.Type())
		}
		n++
		return nil
	})
	if n != 1 {
		t.Errorf("a link to a file: %d visits", n)
	}
}
