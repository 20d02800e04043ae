// Package depcheck enforces the import direction of the packages:
// cmd → wheel → {symcheck, patchelf}, symcheck → rpath → elfx,
// patchelf → elfx, everything → internal; only cmd uses cobra/tablewriter.
package depcheck

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/rocmdoctor/rocmdoctor"

// allowed lists, for each library package, the packages of ours it may
// depend on (transitively). internal/* is always allowed.
var allowed = map[string][]string{
	"elfx":     {},
	"rpath":    {"elfx"},
	"symcheck": {"rpath", "elfx"},
	"patchelf": {"elfx"},
	"wheel":    {"symcheck", "patchelf", "rpath", "elfx"},
}

var cliOnly = []string{"github.com/spf13/cobra", "github.com/olekukonko/tablewriter", "github.com/spf13/pflag"}

type pkg struct {
	ImportPath string
	Deps       []string
}

func TestImportDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps=false", "-json=ImportPath,Deps", mod+"/...").Output()
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
		top := strings.SplitN(rel, "/", 2)[0]
		for _, d := range p.Deps {
			if top != "cmd" {
				for _, c := range cliOnly {
					if strings.HasPrefix(d, c) {
						t.Errorf("%s depends on %s: only cmd may use CLI libraries", rel, d)
					}
				}
			}
			if !strings.HasPrefix(d, mod+"/") {
				continue
			}
			dtop := strings.SplitN(strings.TrimPrefix(d, mod+"/"), "/", 2)[0]
			switch {
			case dtop == "internal" || dtop == top:
			case dtop == "cmd":
				t.Errorf("%s depends on %s: nothing outside cmd may import cmd", rel, d)
			case top == "cmd":
			case top == "internal":
				t.Errorf("%s depends on %s: internal packages must not import library packages", rel, d)
			default:
				ok := false
				for _, a := range allowed[top] {
					ok = ok || a == dtop
				}
				if !ok {
					t.Errorf("%s depends on %s, against the import direction", rel, d)
				}
			}
		}
	}
	if seen < 3 {
		t.Fatalf("go list reported only %d packages", seen)
	}
}
