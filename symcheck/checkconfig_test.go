package symcheck

import (
	"os"
	"path/filepath"
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
