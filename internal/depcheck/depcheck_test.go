// Package depcheck enforces the import direction of the packages:
// cmd → {check, wheel, prefix} → symcheck → rpath → elfx, check → {ck,
// gpu} → elfx, wheel → patchelf → elfx, finding under all of them, and
// which internal helpers each package may use; only cmd uses
// cobra/tablewriter.
package depcheck

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/rocmdoctor/rocmdoctor"

// allowed lists, for each library package, the packages of ours it may
// import, internal helpers included (what they import in turn is checked
// for them); cmd may use any.
var allowed = map[string][]string{
	"docs":     {},
	"finding":  {},
	"elfx":     {"internal/mapfile", "internal/par", "internal/regfile", "internal/saferio", "internal/zstd"},
	"rpath":    {"elfx", "internal/rawpath", "internal/regfile", "internal/saferio"},
	"patchelf": {"elfx", "internal/rawpath", "internal/safefile", "internal/saferio", "internal/writeback"},
	// composable_kernel installs; its CMake evaluator is ck/internal/cmake.
	"ck": {"finding", "elfx", "internal/regfile", "internal/version"},
	// Whether a ROCm install is consistent; built on symcheck's binder.
	"prefix": {"finding", "symcheck", "rpath", "elfx", "internal/regfile", "internal/walk"},
	// Device code and what GPUs it runs on.
	"gpu": {"finding", "elfx", "internal/member", "internal/par", "internal/regfile", "internal/walk", "internal/zipx"},
	// Binding dynamic symbols and the diagnoses built on it.
	"symcheck": {"finding", "rpath", "elfx", "internal/rawpath", "internal/regfile", "internal/walk"},
	// The gate: every check over a tree, with its policy and formats.
	"check": {"finding", "symcheck", "ck", "gpu", "rpath", "elfx", "internal/member", "internal/par", "internal/record",
		"internal/regfile", "internal/safefile", "internal/version", "internal/writeback", "internal/zipx"},
	"wheel": {"symcheck", "patchelf", "rpath", "elfx", "finding", "internal/dcopy", "internal/inflate", "internal/mapfile",
		"internal/pflate", "internal/record", "internal/regfile", "internal/safefile", "internal/walk", "internal/writeback", "internal/zipx"},
	// Helpers that build on helpers.
	"internal/dcopy":   {"internal/mapfile"},
	"internal/member":  {"internal/safefile", "internal/writeback", "internal/zipx"},
	"internal/testenv": {"internal/mapfile", "internal/record"},
	"internal/zipx":    {"internal/inflate", "internal/regfile"},
}

var cliOnly = []string{"github.com/spf13/cobra", "github.com/olekukonko/tablewriter", "github.com/spf13/pflag"}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func TestImportDirection(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Imports,Deps", mod+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		seen++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		who := unit(rel)
		for _, d := range p.Deps {
			for _, c := range cliOnly {
				if who != "cmd" && strings.HasPrefix(d, c) {
					t.Errorf("%s depends on %s: only cmd may use CLI libraries", rel, d)
				}
			}
		}
		for _, d := range p.Imports {
			if !strings.HasPrefix(d, mod+"/") {
				continue
			}
			dep := unit(strings.TrimPrefix(d, mod+"/"))
			switch {
			case dep == who:
			case dep == "cmd":
				t.Errorf("%s depends on %s: nothing outside cmd may import cmd", rel, d)
			case who == "cmd":
			case strings.HasPrefix(who, "internal/") && !strings.HasPrefix(dep, "internal/"):
				t.Errorf("%s depends on %s: internal packages must not import library packages", rel, d)
			case !slices.Contains(allowed[who], dep):
				t.Errorf("%s depends on %s, against the import direction (add it to allowed if that is the design)", rel, d)
			}
		}
	}
	if seen < 3 {
		t.Fatalf("go list reported only %d packages", seen)
	}
}

// unit is what a package's imports are judged by: its top directory, or
// the helper itself under internal/.
func unit(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if parts[0] == "internal" && len(parts) > 1 {
		return "internal/" + parts[1]
	}
	return parts[0]
}

// touchSources opens every Go file of the module: go test caches a
// result by the files a test opens, and go list's reading of them is not
// seen, so without this an edit that breaks the direction could pass from
// the cache.
func touchSources(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := os.Open(p)
		if err == nil {
			f.Close()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
