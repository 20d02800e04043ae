package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/cmd/internal/cli"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/root"
	"github.com/rocmdoctor/rocmdoctor/cmd/internal/schema"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
)

// The published schemas are those of the types the commands print
// (regenerate with go run ./cmd/gendocs docs), and every command's --json
// output on the fixtures validates against its schema (python3's
// jsonschema, draft 2020-12).
func TestJSONSchemas(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	for name, v := range root.JSONOutputs() {
		want, err := schema.Marshal("rocmdoctor "+strings.ReplaceAll(name, "-", " ")+" --json", v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(repo, "docs", "schema", name+".schema.json"))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/schema/%s.schema.json is stale (%v): run go run ./cmd/gendocs docs", name, err)
		}
	}
	py := testenv.Python(t, "jsonschema", "python3-jsonschema")
	t.Chdir(repo)
	whl := "testdata/checktree/share/wheels/onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl"
	runs := map[string][]string{
		"check":        {"check", "--json", "--python=", "testdata/libexecstack.so"},
		"symbols":      {"symbols", "--json", "--index", "testdata/llvm", "testdata/libMIOpen.so"},
		"deps":         {"deps", "--json", "--dlopen", "testdata/checktree/bin/pcapp", "testdata/checktree/lib/libtwounwinders.so"},
		"unwind":       {"unwind", "--json", "testdata/checktree/lib/libtwounwinders.so"},
		"ck":           {"ck", "--json", "testdata/ck"},
		"gpus":         {"gpus", "--json", "testdata/libgpu.so", "testdata/checktree/lib/libgpudamaged.so"},
		"prefix":       {"prefix", "--json", "testdata/checktree"},
		"inspect":      {"inspect", "--json", "testdata/libfoo.so.1", "testdata/libgnu.a", "testdata/libgpu.so"},
		"patch":        {"patch", "--json", "--dry-run", "--set-rpath", "/opt/rocm/lib", "--replace-needed", "libm.so.6", "libmvec.so.1", "testdata/libfoo.so.1"},
		"wheel-relink": {"wheel", "relink", "--json", "--dry-run", "--python=", "--lib-dir", "testdata/checktree/lib", whl},
		"version":      {"version", "--json"},
	}
	dir := t.TempDir()
	var pairs []string
	for name := range root.JSONOutputs() {
		args, ok := runs[name]
		if !ok {
			t.Errorf("no run for %s's schema", name)
			continue
		}
		io, _, out, errOut := cli.Test()
		root.Run(io, args)
		if out.Len() == 0 {
			t.Errorf("%v printed nothing: %s", args, errOut)
			continue
		}
		f := filepath.Join(dir, name+".json")
		os.WriteFile(f, out.Bytes(), 0o644)
		pairs = append(pairs, filepath.Join(repo, "docs", "schema", name+".schema.json"), f)
	}
	script := `import json, sys, jsonschema
a = sys.argv[1:]
bad = 0
for s, d in zip(a[::2], a[1::2]):
    schema, doc = json.load(open(s)), json.load(open(d))
    for e in jsonschema.Draft202012Validator(schema).iter_errors(doc):
        bad += 1
        print(d, "at", "/".join(str(p) for p in e.absolute_path), ":", e.message[:300])
sys.exit(1 if bad else 0)`
	if out, err := exec.Command(py, append([]string{"-c", script}, pairs...)...).CombinedOutput(); err != nil {
		t.Errorf("outputs that do not validate: %v\n%s", err, out)
	}
}
