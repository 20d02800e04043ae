package symcheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestFindConfigUpwardTOMLBeforeYAML(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b")
	os.MkdirAll(deep, 0o755)
	if got := FindConfig(deep); got != "" && filepath.Dir(got) == root {
		t.Fatalf("found %s before writing any", got)
	}
	y := filepath.Join(root, "a", ".rocmdoctor.yml")
	os.WriteFile(y, []byte("glibc: 2.30\n"), 0o644)
	if got := FindConfig(deep); got != y {
		t.Fatalf("FindConfig = %q, want %q", got, y)
	}
	var o CheckOptions
	if _, err := LoadConfig(y, &o); err != nil || o.Glibc != "2.30" {
		t.Errorf("LoadConfig(yaml): glibc %q, err %v (2.30 must stay a string)", o.Glibc, err)
	}
	tm := filepath.Join(root, "a", ".rocmdoctor.toml")
	os.WriteFile(tm, []byte("glibc = \"2.28\"\n"), 0o644)
	if got := FindConfig(deep); got != tm {
		t.Errorf("with both: FindConfig = %q, want the TOML %q", got, tm)
	}
}

// gpu_targets: an array or a CMake-style list, each a valid target ID;
// targets given as flags win.
func TestLoadConfigGPUTargets(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		file, text string
		want       []string
		err        string
	}{
		{".rocmdoctor.toml", "gpu_targets = [\"gfx90a\", \"gfx1100:xnack+\"]\n", []string{"gfx90a", "gfx1100:xnack+"}, ""},
		{".rocmdoctor.toml", "gpu_targets = \"gfx90a;gfx1030, gfx942\"\n", []string{"gfx90a", "gfx1030", "gfx942"}, ""},
		{".rocmdoctor.yaml", "gpu_targets: [gfx90a, gfx1100]\n", []string{"gfx90a", "gfx1100"}, ""},
		{".rocmdoctor.toml", "gpu_targets = [\"gfx90a:foo\"]\n", nil, `gpu_targets: "gfx90a:foo"`},
		{".rocmdoctor.toml", "gpu_targets = true\n", nil, "gpu_targets must be an array of strings or a string"},
	} {
		p := filepath.Join(dir, tt.file)
		os.WriteFile(p, []byte(tt.text), 0o644)
		var o CheckOptions
		_, err := LoadConfig(p, &o)
		switch {
		case tt.err != "":
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), p+": ") {
				t.Errorf("%q: err %v, want one naming the file and saying %q", tt.text, err, tt.err)
			}
		case err != nil || !slices.Equal(o.GPUTargets, tt.want):
			t.Errorf("%q: targets %q, err %v; want %q", tt.text, o.GPUTargets, err, tt.want)
		}
		os.Remove(p)
	}
	p := filepath.Join(dir, ".rocmdoctor.toml")
	os.WriteFile(p, []byte("gpu_targets = [\"gfx90a\"]\n"), 0o644)
	o := CheckOptions{GPUTargets: []string{"gfx942"}}
	if _, err := LoadConfig(p, &o); err != nil || !slices.Equal(o.GPUTargets, []string{"gfx942"}) {
		t.Errorf("flags then file: %q, %v; want the flag's gfx942", o.GPUTargets, err)
	}
}
