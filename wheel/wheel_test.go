package wheel_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rocmdoctor/rocmdoctor/check"
	"github.com/rocmdoctor/rocmdoctor/elfx"
	"github.com/rocmdoctor/rocmdoctor/finding"
	"github.com/rocmdoctor/rocmdoctor/internal/dcopy"
	"github.com/rocmdoctor/rocmdoctor/internal/record"
	"github.com/rocmdoctor/rocmdoctor/internal/testenv"
	"github.com/rocmdoctor/rocmdoctor/internal/zipx"
	"github.com/rocmdoctor/rocmdoctor/patchelf"
	"github.com/rocmdoctor/rocmdoctor/rpath"
	"github.com/rocmdoctor/rocmdoctor/wheel"
)

const (
	wheelName = "onnxruntime_rocm-1.18.0-cp311-cp311-linux_x86_64.whl"
	distInfo  = "onnxruntime_rocm-1.18.0.dist-info"
	graft     = "onnxruntime_rocm.libs/libamdhip64-46b24d76.so.6.2.60200"
	provider  = "onnxruntime/capi/libonnxruntime_providers_rocm.so"
	shared    = "onnxruntime/capi/libonnxruntime_providers_shared.so"
)

// fixture builds, with gcc, a stub ROCm prefix and an onnxruntime-rocm
// shaped wheel: a provider library needing an auditwheel-grafted
// libamdhip64, libMIOpen.so.1, librocm_smi64.so.7 (the prefix has .so.1)
// and an in-wheel shared provider.
type fixture struct {
	dir, prefix, wheel string
}

func build(t testing.TB) *fixture { return buildWith(t, "", nil) }

// buildWith builds the fixture with extra C source in the provider and
// more entries (stored, before the dist-info) in the wheel.
func buildWith(t testing.TB, extra string, more map[string][]byte) *fixture {
	t.Helper()
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	fx := &fixture{dir: dir, prefix: filepath.Join(dir, "rocm"), wheel: filepath.Join(dir, "in", wheelName)}
	cc := func(out, soname, src string, args ...string) string {
		t.Helper()
		return ccLib(t, gcc, out, soname, src, args...)
	}
	lib := filepath.Join(fx.prefix, "lib")
	cc(filepath.Join(lib, "libamdhip64.so.6"), "libamdhip64.so.6", "int hipMalloc(void){return 0;}\n")
	cc(filepath.Join(lib, "libMIOpen.so.1"), "libMIOpen.so.1", "int miopenCreate(void){return 0;}\n")
	cc(filepath.Join(lib, "librocm_smi64.so.1"), "librocm_smi64.so.1", "int rsmi_init(void){return 0;}\n")
	link := filepath.Join(dir, "link")
	cc(filepath.Join(link, "librocm_smi64.so.7"), "librocm_smi64.so.7", "int rsmi_init(void){return 0;}\n")
	stage := filepath.Join(dir, "stage")
	cc(filepath.Join(stage, graft), filepath.Base(graft), "int hipMalloc(void){return 0;}\n")
	cc(filepath.Join(stage, shared), "libonnxruntime_providers_shared.so", "int provider_shared_fn(void){return 0;}\n")
	cc(filepath.Join(stage, provider), "libonnxruntime_providers_rocm.so",
		"extern int hipMalloc(void), miopenCreate(void), rsmi_init(void), provider_shared_fn(void);\nint provider_init(void){return hipMalloc()+miopenCreate()+rsmi_init()+provider_shared_fn();}\n"+extra,
		filepath.Join(stage, graft), filepath.Join(lib, "libMIOpen.so.1"), filepath.Join(link, "librocm_smi64.so.7"),
		filepath.Join(stage, shared), "-Wl,--enable-new-dtags,-rpath,$ORIGIN:$ORIGIN/../../onnxruntime_rocm.libs")
	files := map[string][]byte{
		"onnxruntime/__init__.py":   []byte("# onnxruntime\n"),
		distInfo + "/METADATA":      []byte("Metadata-Version: 2.1\nName: onnxruntime-rocm\nVersion: 1.18.0\n"),
		distInfo + "/WHEEL":         []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
		distInfo + "/RECORD.jws":    []byte("{}"),
		distInfo + "/top_level.txt": []byte("onnxruntime\n"),
	}
	for _, rel := range []string{graft, shared, provider} {
		b, _ := os.ReadFile(filepath.Join(stage, rel))
		files[rel] = b
	}
	order := []string{"onnxruntime/__init__.py", provider, shared, graft}
	for _, n := range slices.Sorted(maps.Keys(more)) {
		files[n] = more[n]
		order = append(order, n)
	}
	order = append(order, distInfo+"/METADATA", distInfo+"/WHEEL", distInfo+"/top_level.txt", distInfo+"/RECORD.jws", distInfo+"/RECORD")
	writeWheel(t, fx.wheel, order, files, func(n string) bool { return more[n] != nil })
	return fx
}

// ccLib builds the shared library out (SONAME soname) from C source src
// with gcc, the source written beside it.
func ccLib(t testing.TB, gcc, out, soname, src string, args ...string) string {
	t.Helper()
	c := filepath.Join(filepath.Dir(out), strings.ReplaceAll(filepath.Base(out), "-", "_")+".c")
	os.MkdirAll(filepath.Dir(out), 0o755)
	os.WriteFile(c, []byte(src), 0o644)
	all := append([]string{"-shared", "-fPIC", "-o", out, c, "-Wl,-soname," + soname}, args...)
	if o, err := exec.Command(gcc, all...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", all, err, o)
	}
	os.Remove(c)
	return out
}

// writeWheel writes the entries of files in order as the wheel at path,
// deflated unless stored says otherwise; the last entry is RECORD,
// written here with a line for each of the others.
func writeWheel(t testing.TB, path string, order []string, files map[string][]byte, stored func(string) bool) {
	t.Helper()
	var rec strings.Builder
	last := order[len(order)-1]
	for _, n := range order[:len(order)-1] {
		rec.WriteString(n + "," + record.Hash(files[n]) + "," + strconv.Itoa(len(files[n])) + "\n")
	}
	rec.WriteString(last + ",,\n")
	files[last] = []byte(rec.String())
	os.MkdirAll(filepath.Dir(path), 0o755)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	for _, n := range order {
		method := zip.Deflate
		if stored(n) {
			method = zip.Store
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: n, Method: method})
		w.Write(files[n])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	out.Close()
}

func readZip(t *testing.T, p string) map[string]*zip.File {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	m := map[string]*zip.File{}
	for _, f := range zr.File {
		m[f.Name] = f
	}
	return m
}

func readZipList(t *testing.T, p string) []string {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	return names
}

func content(t *testing.T, f *zip.File) []byte {
	rc, err := f.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, _ := io.ReadAll(rc)
	return b
}

func TestRelinkRefusesSONAMEChangeWithoutWriting(t *testing.T) {
	fx := build(t)
	before, _ := os.ReadFile(fx.wheel)
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, InPlace: true})
	if !errors.Is(err, wheel.ErrRefused) {
		t.Fatalf("err = %v, want ErrRefused", err)
	}
	if after, _ := os.ReadFile(fx.wheel); !bytes.Equal(before, after) {
		t.Errorf("the wheel changed although the relink was refused")
	}
	// The output begun while the wheel was staged is gone too.
	onlyWheel := func(what string) {
		t.Helper()
		ents, _ := os.ReadDir(filepath.Dir(fx.wheel))
		if len(ents) != 1 || ents[0].Name() != wheelName {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s: the wheel's directory holds %v", what, names)
		}
	}
	onlyWheel("refused")
	if _, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, InPlace: true, DryRun: true}); err != nil && !errors.Is(err, wheel.ErrRefused) {
		t.Fatal(err)
	}
	onlyWheel("dry run")
	classes := map[string]string{}
	for _, f := range p.Files {
		if f.Path == provider {
			for _, n := range f.Needed {
				classes[n.Name] = n.Class + ">" + n.Replacement
			}
		}
	}
	want := map[string]string{
		filepath.Base(graft):                 "grafted>libamdhip64.so.6",
		"libMIOpen.so.1":                     "target>",
		"librocm_smi64.so.7":                 "soname-change>librocm_smi64.so.1",
		"libonnxruntime_providers_shared.so": "in-wheel>",
	}
	for k, v := range want {
		if classes[k] != v {
			t.Errorf("%s: %s, want %s (all: %v)", k, classes[k], v, classes)
		}
	}
}

// A --rocm given relative to the working directory must still produce
// absolute RUNPATH entries.
func TestRelinkRelativeTargetBecomesAbsolute(t *testing.T) {
	fx := build(t)
	t.Chdir(fx.dir)
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{"rocm"}, AllowSONAMEChange: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(fx.prefix, "lib")
	for _, f := range p.Files {
		if f.Path != provider {
			continue
		}
		for _, e := range strings.Split(f.NewRunPath, ":") {
			if !strings.HasPrefix(e, "$ORIGIN") && !filepath.IsAbs(e) {
				t.Errorf("relative RUNPATH entry %q in %q", e, f.NewRunPath)
			}
		}
		if !strings.Contains(f.NewRunPath, abs) {
			t.Errorf("RUNPATH %q lacks %s", f.NewRunPath, abs)
		}
		return
	}
	t.Fatalf("no plan for %s", provider)
}

func TestRelinkWritesAVerifiableWheel(t *testing.T) {
	fx := build(t)
	out := filepath.Join(fx.dir, "out")
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Written || p.Output != filepath.Join(out, wheelName) {
		t.Fatalf("plan = %+v", p)
	}
	if len(p.Drop) != 1 || p.Drop[0] != graft {
		t.Errorf("drop = %v", p.Drop)
	}
	z := readZip(t, p.Output)
	if z[graft] != nil || z[distInfo+"/RECORD.jws"] != nil {
		t.Errorf("graft or signature still in the wheel")
	}
	// The provider's NEEDED and RUNPATH as planned.
	b := content(t, z[provider])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), provider)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Dynamic()
	if strings.Join(d.Needed, " ") != "libamdhip64.so.6 libMIOpen.so.1 librocm_smi64.so.1 libonnxruntime_providers_shared.so" {
		t.Errorf("NEEDED = %v", d.Needed)
	}
	if d.RunPath != "$ORIGIN:"+filepath.Join(fx.prefix, "lib") || d.HasRPath {
		t.Errorf("RUNPATH = %q", d.RunPath)
	}
	// Unchanged entries copied raw; RECORD matches every entry.
	orig := readZip(t, fx.wheel)
	for _, n := range []string{"onnxruntime/__init__.py", shared, distInfo + "/METADATA"} {
		if orig[n].CRC32 != z[n].CRC32 || orig[n].CompressedSize64 != z[n].CompressedSize64 || orig[n].Modified != z[n].Modified {
			t.Errorf("%s was not copied raw", n)
		}
	}
	verifyRecord(t, z)
	pythonChecks(t, fx, p.Output)
}

// Plan, then apply: PlanRelink's plan (its findings verified) writes
// nothing into the output directory until Apply, which writes the same
// wheel Relink writes; a plan is applied once; Close on an unapplied plan
// leaves neither a temporary file in the output directory nor the work
// directory. A dry-run plan (nothing begun early) applies too.
func TestPlanThenApply(t *testing.T) {
	fx := build(t)
	o := wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true}
	works := func() []string {
		m, _ := filepath.Glob(filepath.Join(os.TempDir(), "rocmdoctor-wheel-*"))
		return m
	}
	before := len(works())
	ctx := context.Background()

	o.Output = filepath.Join(fx.dir, "closed")
	p, err := wheel.PlanRelink(ctx, fx.wheel, o)
	if err != nil || p.Written || len(p.Files) == 0 {
		t.Fatalf("plan: %v %+v", err, p)
	}
	p.Close()
	if ents, _ := os.ReadDir(o.Output); len(ents) != 0 {
		t.Errorf("a closed plan left %d files in the output directory", len(ents))
	}
	if n := len(works()); n != before {
		t.Errorf("%d work directories after Close, %d before", n, before)
	}
	if err := p.Apply(ctx); err == nil {
		t.Error("a closed plan applied")
	}

	for _, dry := range []bool{false, true} {
		o.DryRun = dry
		o.Output = filepath.Join(fx.dir, fmt.Sprint("applied-", dry))
		p, err := wheel.PlanRelink(ctx, fx.wheel, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Apply(ctx); err != nil {
			t.Fatalf("dry %v: %v", dry, err)
		}
		if !p.Written || p.Output != filepath.Join(o.Output, wheelName) {
			t.Errorf("dry %v: %+v", dry, p)
		}
		if err := p.Apply(ctx); err == nil {
			t.Errorf("dry %v: applied twice", dry)
		}
		verifyRecord(t, readZip(t, p.Output))
		if n := len(works()); n != before {
			t.Errorf("dry %v: %d work directories after Apply, %d before", dry, n, before)
		}
	}
	a, _ := os.ReadFile(filepath.Join(fx.dir, "applied-false", wheelName))
	b, _ := os.ReadFile(filepath.Join(fx.dir, "applied-true", wheelName))
	if !bytes.Equal(a, b) {
		t.Error("a dry-run plan applied writes another wheel than a plan that began its output early")
	}
}

// A provider of several MB keeps its compressed form: only the blocks
// around the edited headers, dynamic section and appended segment are
// compressed again, and the result still verifies, installs and loads.
// Large unchanged entries (copied by the kernel, not through archive/zip)
// come out byte for byte, around it and after it.
func TestRelinkSplicesLargeLibrary(t *testing.T) {
	fx, kernels := largeLibrary(t, ".rodata")
	out := filepath.Join(fx.dir, "out")
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	checkSpliced(t, p, provider)
	z := readZip(t, p.Output)
	if z[provider].Method != zip.Deflate {
		t.Errorf("provider method %d", z[provider].Method)
	}
	for n, want := range kernels {
		if z[n] == nil || !bytes.Equal(content(t, z[n]), want) {
			t.Errorf("%s did not come through unchanged", n)
		}
	}
	// Entries in the input's order (less the dropped graft and signature).
	var want, got []string
	for _, f := range readZipList(t, fx.wheel) {
		if f != graft && !strings.HasSuffix(f, "RECORD.jws") {
			want = append(want, f)
		}
	}
	got = readZipList(t, p.Output)
	if !slices.Equal(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	pythonChecks(t, fx, p.Output)
}

// largeLibrary is the fixture wheel with a provider of ~6 MB (a blob of
// text in section, deflated in many blocks) and large unchanged entries.
// The text is random letters: a token repeated all through it would be
// copied from copy to copy, and a decoder begun in the middle without the
// history (inflate.Tail, for a prediction) would never know its bytes.
func largeLibrary(t *testing.T, section string) (*fixture, map[string][]byte) {
	blob := filepath.Join(t.TempDir(), "blob")
	b := make([]byte, 6<<20)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz_\n"[rng.IntN(28)]
	}
	if err := os.WriteFile(blob, b, 0o644); err != nil {
		t.Fatal(err)
	}
	kernels := map[string][]byte{}
	for i, n := range []int{3<<20 + 17, 1 << 20, 5<<20 + 4093} {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(j*31 + i + j>>12)
		}
		kernels["onnxruntime/capi/kernels_"+strconv.Itoa(i)+".bin"] = data
	}
	fx := buildWith(t, `__asm__(".section `+section+`\n.global kernel_blob\nkernel_blob:\n.incbin \"`+blob+`\"\n.previous\n");`+"\n", kernels)
	return fx, kernels
}

// A large changed library is hashed for RECORD while it is inflated,
// through the edits planned from its end, and the bulk of its machine code
// is not written to the scratch copy (predict.go); the wheel is the same as
// without: RECORD verifies, pip installs it, the library loads. A
// prediction that the real edit does not confirm, or a splice that needs
// the unwritten part, inflates the library again and still makes the
// right wheel; a digest whose bytes do not match the file fails the
// relink, which writes nothing.
func TestRelinkPredictsLargeLibrary(t *testing.T) {
	// The blob in an executable section: the hole goes there.
	fx, _ := largeLibrary(t, `.text.blob,\"ax\"`)
	predict := wheel.Tuning{PredictMin: 64 << 10, HoleMin: 1 << 20, HoleMargin: 256 << 10}
	flip := func(p *patchelf.Plan) {
		p.Patches[0].Data = append([]byte{^p.Patches[0].Data[0]}, p.Patches[0].Data[1:]...)
	}
	for _, c := range []struct {
		name                string
		plan                func(*patchelf.Plan)
		hashed              func(int64, []byte)
		hole                func([2]int64) [2]int64
		used, holes, filled int64
		fails               string
	}{
		{name: "predicted", used: 1, holes: 1},
		{name: "plan-differs", plan: flip, holes: 1, filled: 1},
		// A hole from 8 KiB on: the splice needs the rest of the first
		// deflate block, where the program headers were edited.
		{name: "splice-needs-hole", hole: func(h [2]int64) [2]int64 { return [2]int64{8 << 10, h[1]} }, holes: 1, filled: 1},
		{name: "hashed-differs", hashed: func(off int64, b []byte) {
			if off == 0 {
				b[100] ^= 1
			}
		}, holes: 1, fails: "internal error: the digest taken while it was inflated does not match"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tu := predict
			tu.TamperPlan, tu.TamperHashed, tu.TamperHole = c.plan, c.hashed, c.hole
			used, holes, filled := wheel.Predictions()
			out := filepath.Join(fx.dir, c.name)
			p, err := wheel.Relink(context.Background(), fx.wheel, wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, Output: out}, tu))
			u, h, f := wheel.Predictions()
			if got := [3]int64{u - used, h - holes, f - filled}; got != [3]int64{c.used, c.holes, c.filled} {
				t.Errorf("predictions used, holes left, holes filled: %v, want %v", got, [3]int64{c.used, c.holes, c.filled})
			}
			if c.fails != "" {
				if err == nil || !strings.Contains(err.Error(), c.fails) {
					t.Fatalf("error %v, want one saying %q", err, c.fails)
				}
				if entries, _ := os.ReadDir(out); len(entries) != 0 {
					t.Errorf("a failed relink left %d files in %s", len(entries), out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkSpliced(t, p, provider)
			verifyRecord(t, readZip(t, p.Output))
			if c.name != "predicted" {
				return
			}
			pythonChecks(t, fx, p.Output)
			// Planned and verified on a scratch copy with a hole, the
			// same plan and findings as on a whole one.
			whole, err := wheel.Relink(context.Background(), fx.wheel, wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, DryRun: true},
				wheel.Tuning{PredictMin: 1 << 62, HoleMin: 1 << 62}))
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal([]any{p.Files, p.Findings, p.Drop})
			b, _ := json.Marshal([]any{whole.Files, whole.Findings, whole.Drop})
			if !bytes.Equal(a, b) {
				t.Errorf("plan with a hole:\n%s\nwithout:\n%s", a, b)
			}
		})
	}
}

// checkSpliced: the plan's note says the member kept at least 90% of its
// bytes in the original compressed form.
func checkSpliced(t *testing.T, p *wheel.Plan, member string) {
	t.Helper()
	var note string
	for _, n := range p.Notes {
		if strings.HasPrefix(n, member+": ") {
			note = n
		}
	}
	var kept, total, again int64
	if _, err := fmt.Sscanf(note, member+": %d of %d bytes kept in the original compressed form, %d compressed again", &kept, &total, &again); err != nil {
		t.Fatalf("no splice note for %s (%v): %q", member, err, p.Notes)
	}
	if kept < total*9/10 || kept+again != total {
		t.Errorf("%s: kept %d of %d bytes, compressed %d again", member, kept, total, again)
	}
}

// pythonChecks: RECORD verified with zipfile+hashlib, pip installs the
// wheel into a venv, and the provider loads with ctypes (the real loader).
func pythonChecks(t *testing.T, fx *fixture, whl string) {
	py := pythonVerifyRecord(t, whl)
	venv := filepath.Join(fx.dir, "venv")
	if out, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
		testenv.Missing(t, "python3 venv ("+strings.TrimSpace(string(out))+")", "apt-get install python3-venv")
	}
	vpy := filepath.Join(venv, "bin", "python")
	if out, err := exec.Command(vpy, "-m", "pip", "install", "--no-deps", "--no-index", "--disable-pip-version-check", whl).CombinedOutput(); err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	load := `import ctypes,glob,sys
p=glob.glob(sys.prefix+'/lib/python*/site-packages/onnxruntime/capi/libonnxruntime_providers_rocm.so')[0]
print(ctypes.CDLL(p).provider_init())`
	if out, err := exec.Command(vpy, "-c", load).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("the relinked provider does not load: %v\n%s", err, out)
	}
	// The installed distribution can be relinked in place too.
	site, _ := filepath.Glob(filepath.Join(venv, "lib", "python*", "site-packages", distInfo))
	if len(site) != 1 {
		t.Fatalf("installed dist-info not found")
	}
	p, err := wheel.Relink(context.Background(), site[0], wheel.Options{LibDirs: []string{filepath.Join(fx.prefix, "lib")}, InPlace: true})
	if err != nil {
		t.Fatalf("relink installed: %v", err)
	}
	if p.Kind != "installed" || !p.Written {
		t.Errorf("installed relink: %+v", p)
	}
	if out, err := exec.Command(vpy, "-c", load).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "0" {
		t.Fatalf("after relinking the installed distribution: %v\n%s", err, out)
	}
}

// pythonVerifyRecord reads whl with Python's zipfile, as pip does, and
// checks every entry against RECORD; it returns the python3 it used.
func pythonVerifyRecord(t *testing.T, whl string) string {
	py := testenv.Tool(t, "python3", "python3")
	verify := `import zipfile,hashlib,base64,csv,io,sys
z=zipfile.ZipFile(sys.argv[1]); rec=[n for n in z.namelist() if n.endswith('.dist-info/RECORD')][0]
for row in csv.reader(io.StringIO(z.read(rec).decode())):
    if row[0]==rec: continue
    data=z.read(row[0]); h='sha256='+base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    assert row[1]==h and int(row[2])==len(data), row
print('ok')`
	if out, err := exec.Command(py, "-c", verify, whl).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("RECORD does not verify with Python: %v\n%s", err, out)
	}
	return py
}

// verifyRecord checks every entry of the wheel z against its RECORD,
// which lists every entry once.
func verifyRecord(t *testing.T, z map[string]*zip.File) {
	t.Helper()
	var recName string
	for n := range z {
		if strings.HasSuffix(n, ".dist-info/RECORD") {
			recName = n
		}
	}
	if recName == "" {
		t.Fatal("no RECORD in the wheel")
	}
	rec := string(content(t, z[recName]))
	lines := strings.Split(strings.TrimSpace(rec), "\n")
	if len(lines) != len(z) {
		t.Errorf("RECORD has %d lines for %d entries:\n%s", len(lines), len(z), rec)
	}
	for _, l := range lines {
		parts := strings.Split(l, ",")
		if parts[0] == recName {
			if parts[1] != "" {
				t.Errorf("RECORD lists a hash for itself")
			}
			continue
		}
		if z[parts[0]] == nil {
			t.Errorf("RECORD line %q names no entry", l)
			continue
		}
		data := content(t, z[parts[0]])
		if parts[1] != record.Hash(data) || parts[2] != strconv.Itoa(len(data)) {
			t.Errorf("RECORD line %q does not match the entry", l)
		}
	}
}

// PyTorch's ROCm wheels are larger than 4 GiB. Their entries past 4 GiB
// carry a zip64 extra field with their offset, and so do a relinked
// wheel's. Here the input begins 5 GiB into a sparse file (archive/zip
// then gives each entry a zip64 field, as Python's zipfile does past
// 4 GiB), and so does the output. When the input's zip64 fields were
// copied into the output, readers took the old offsets from them: Go's
// and Python's zip readers refused the wheel ("Corrupt zip64 extra
// field"), so pip could not install it.
func TestRelinkPast4GiB(t *testing.T) {
	fx := build(t)
	const base = 5 << 30
	rebase(t, fx.wheel, base)
	out := filepath.Join(fx.dir, "out")
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, Output: out}, wheel.Tuning{OutputBase: base}))
	if err != nil {
		t.Fatal(err)
	}
	z := readZip(t, p.Output)
	for name, zf := range z {
		if off, err := zf.DataOffset(); err != nil || off < base {
			t.Fatalf("%s: data at %d (%v), want past the %d-byte hole", name, off, err, int64(base))
		}
	}
	b := content(t, z[provider])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), provider)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Dynamic(); d.RunPath != "$ORIGIN:"+filepath.Join(fx.prefix, "lib") {
		t.Errorf("RUNPATH = %q", d.RunPath)
	}
	verifyRecord(t, z)
	pythonVerifyRecord(t, p.Output)
}

// rebase rewrites the zip at path so that it begins base bytes into its
// file, after a hole, its entries copied raw.
func rebase(t *testing.T, path string, base int64) {
	t.Helper()
	rewriteZip(t, path, base, func(*zip.FileHeader) {})
	// The premise: every entry of the input has a zip64 field.
	for name, zf := range readZip(t, path) {
		if !bytes.Contains(zf.Extra, []byte{1, 0, 24, 0}) {
			t.Fatalf("%s has no zip64 extra field: % x", name, zf.Extra)
		}
	}
}

// rewriteZip rewrites the zip at path, beginning base bytes into its file
// (after a hole), each entry copied raw under its header as edit leaves it.
func rewriteZip(t *testing.T, path string, base int64, edit func(*zip.FileHeader)) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tmp := path + ".rewritten"
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(base, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	zw.SetOffset(base)
	for _, zf := range zr.File {
		h := zf.FileHeader
		edit(&h)
		w, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		r, err := zf.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestCorpusOnnxruntimeNode relinks the real vendor libonnxruntime.so.1
// from the npm package onnxruntime-node (RUNPATH $ORIGIN) inside a
// wheel-shaped zip and loads it. .ci/run downloads the package and sets
// ROCMDOCTOR_ORT_NODE_TGZ.
func TestCorpusOnnxruntimeNode(t *testing.T) {
	testenv.Corpus(t)
	tgz := os.Getenv("ROCMDOCTOR_ORT_NODE_TGZ")
	if tgz == "" {
		testenv.Missing(t, "the onnxruntime-node npm package (ROCMDOCTOR_ORT_NODE_TGZ)", "npm pack onnxruntime-node")
	}
	py := testenv.Tool(t, "python3", "python3")
	fh, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	gz, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var lib []byte
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		if strings.HasSuffix(h.Name, "linux/x64/libonnxruntime.so.1") {
			lib, _ = io.ReadAll(tr)
			break
		}
	}
	if lib == nil {
		t.Fatalf("%s has no linux/x64/libonnxruntime.so.1", tgz)
	}
	dir := t.TempDir()
	whl := filepath.Join(dir, "onnxruntime_node-1.0.0-py3-none-linux_x86_64.whl")
	out, _ := os.Create(whl)
	zw := zip.NewWriter(out)
	name := "onnxruntime/capi/libonnxruntime.so.1"
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
	w.Write(lib)
	w, _ = zw.Create("onnxruntime_node-1.0.0.dist-info/RECORD")
	w.Write([]byte(name + "," + record.Hash(lib) + "," + strconv.Itoa(len(lib)) + "\nonnxruntime_node-1.0.0.dist-info/RECORD,,\n"))
	zw.Close()
	out.Close()
	// The system's own directory as the target: the loader already finds
	// everything the library needs, so nothing changes (its RUNPATH
	// $ORIGIN was rewritten to the directory before).
	sysDir := "/usr/lib/x86_64-linux-gnu"
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{sysDir}, Output: filepath.Join(dir, "same")})
	if err != nil {
		t.Fatalf("relink: %v", err)
	}
	if len(p.Files) != 1 || len(p.Files[0].Edits) != 0 {
		t.Errorf("the system directory as target edits %+v", p.Files)
	}
	if got := content(t, readZip(t, p.Output)[name]); !bytes.Equal(got, lib) {
		t.Errorf("the library changed")
	}
	// A target with a library of its own (a copy of libm.so.6, which the
	// library needs): the RUNPATH must name it, and the large member is
	// spliced.
	target := filepath.Join(dir, "target")
	os.MkdirAll(target, 0o755)
	libm, err := os.ReadFile(filepath.Join(sysDir, "libm.so.6"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target, "libm.so.6"), libm, 0o755)
	p, err = wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{target}, Output: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatalf("relink: %v", err)
	}
	checkSpliced(t, p, name)
	z := readZip(t, p.Output)
	b := content(t, z[name])
	so := filepath.Join(dir, "libonnxruntime.so.1")
	os.WriteFile(so, b, 0o755)
	f, _ := elfx.Open(so)
	d, _ := f.Dynamic()
	f.Close()
	if d.RunPath != target {
		t.Errorf("RUNPATH = %q, want %s", d.RunPath, target)
	}
	if out, err := exec.Command(py, "-c", "import ctypes,sys; ctypes.CDLL(sys.argv[1]); print('ok')", so).CombinedOutput(); err != nil {
		t.Fatalf("relinked libonnxruntime.so.1 does not load: %v\n%s", err, out)
	}
	t.Logf("relinked %s (%d bytes) and loaded it", name, len(b))
}

// A damaged wheel is refused with an error naming the wheel and the
// member, nothing is written, and the input is left as it was.
func TestRelinkCorruptWheel(t *testing.T) {
	fx := build(t)
	orig, err := os.ReadFile(fx.wheel)
	if err != nil {
		t.Fatal(err)
	}
	z := readZip(t, fx.wheel)
	off, err := z[provider].DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	n := int64(z[provider].CompressedSize64)
	record := ""
	for name := range z {
		if strings.HasSuffix(name, ".dist-info/RECORD") {
			record = name
		}
	}
	// crcs flips the bit in every copy of member's CRC-32 (local header
	// and central directory).
	crcs := func(b []byte, member string) []byte {
		var c [4]byte
		binary.LittleEndian.PutUint32(c[:], z[member].CRC32)
		for i := 0; i+4 <= len(b); i++ {
			if bytes.Equal(b[i:i+4], c[:]) {
				b[i] ^= 1
			}
		}
		return b
	}
	// What the error must say beyond the wheel and the member.
	wants := map[string]string{
		"wrong CRC-32":                  "CRC-32 recorded for it",
		"bzip2 method":                  "compressed with bzip2 (method 12)",
		"local header outside the file": "the central directory puts its local header outside the file",
		"RECORD with a wrong CRC-32":    "checksum error",
		"damaged local header":          "runs past the central directory",
		"overlapping entries":           "it overlaps member",
	}
	for name, damage := range map[string]func([]byte) []byte{
		"flipped bytes in the member": func(b []byte) []byte {
			for i := off + n/2; i < off+n/2+16; i++ {
				b[i] ^= 0xa5
			}
			return b
		},
		"zeroed member": func(b []byte) []byte {
			clear(b[off+8 : off+n])
			return b
		},
		"truncated file": func(b []byte) []byte { return b[:len(b)/2] },
		// Headers (local and central) that say bzip2: archive/zip cannot
		// read it, and wheels never use it.
		"bzip2 method": func(b []byte) []byte {
			for _, h := range []struct {
				sig          string
				nameAt, meth int
			}{{"PK\x03\x04", 30, 8}, {"PK\x01\x02", 46, 10}} {
				for i := 0; i+h.nameAt+len(provider) <= len(b); i++ {
					if string(b[i:i+4]) == h.sig && string(b[i+h.nameAt:i+h.nameAt+len(provider)]) == provider {
						binary.LittleEndian.PutUint16(b[i+h.meth:], 12)
					}
				}
			}
			return b
		},
		// The data inflates cleanly; only the CRC-32 the headers record
		// (local header and central directory) is wrong.
		"wrong CRC-32": func(b []byte) []byte { return crcs(b, provider) },
		// A central directory entry whose local header offset lies past
		// the end (archive/zip said "readat …: negative offset" or
		// "invalid argument" for such offsets).
		"local header outside the file": func(b []byte) []byte {
			for i := 0; i+46+len(provider) <= len(b); i++ {
				if string(b[i:i+4]) == "PK\x01\x02" && string(b[i+46:i+46+len(provider)]) == provider {
					binary.LittleEndian.PutUint32(b[i+42:], 0x7ffffff0)
				}
			}
			return b
		},
		// RECORD's lines are trusted for the entries copied as they are:
		// one that does not read back whole was taken as it came.
		"RECORD with a wrong CRC-32": func(b []byte) []byte { return crcs(b, record) },
		// An extra-field length of 0xffff in the local header: the data
		// seems to start 64 KiB later, past the end, and read as a member
		// that ends early (relink said "no native libraries", dropped the
		// graft, and wrote a wheel unzip -t rejects).
		"damaged local header": func(b []byte) []byte {
			for i := 0; i+30+len(provider) <= len(b); i++ {
				if string(b[i:i+4]) == "PK\x03\x04" && string(b[i+30:i+30+len(provider)]) == provider {
					binary.LittleEndian.PutUint16(b[i+28:], 0xffff)
				}
			}
			return b
		},
		// The central directory entry of the shared provider points at
		// the provider's local header too.
		"overlapping entries": func(b []byte) []byte {
			var at uint32
			for i := 0; i+46+len(provider) <= len(b); i++ {
				if string(b[i:i+4]) == "PK\x01\x02" && string(b[i+46:i+46+len(provider)]) == provider {
					at = binary.LittleEndian.Uint32(b[i+42:])
				}
			}
			for i := 0; i+46+len(shared) <= len(b); i++ {
				if string(b[i:i+4]) == "PK\x01\x02" && string(b[i+46:i+46+len(shared)]) == shared {
					binary.LittleEndian.PutUint32(b[i+42:], at)
				}
			}
			return b
		},
	} {
		t.Run(name, func(t *testing.T) {
			bad := damage(append([]byte(nil), orig...))
			in := filepath.Join(t.TempDir(), wheelName)
			if err := os.WriteFile(in, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			_, err := wheel.Relink(context.Background(), in, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out})
			if err == nil {
				t.Fatal("a damaged wheel was relinked")
			}
			if !strings.Contains(err.Error(), in) {
				t.Errorf("the error does not name the wheel: %v", err)
			}
			member := provider
			if name == "RECORD with a wrong CRC-32" {
				member = record
			}
			if name == "overlapping entries" && strings.Contains(err.Error(), in+"!/"+shared+": ") {
				member = shared // (either of the two is named, and the message names both)
			}
			if name != "truncated file" && !strings.Contains(err.Error(), in+"!/"+member+": ") {
				t.Errorf("the error does not name the member %s: %v", member, err)
			}
			if want := wants[name]; !strings.Contains(err.Error(), want) {
				t.Errorf("the error does not say %q: %v", want, err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("something was written: %v", ents)
			}
			if b, _ := os.ReadFile(in); !bytes.Equal(b, bad) {
				t.Errorf("the input changed")
			}
		})
	}
}

// A member that inflates to more than its header says is refused before
// it is written out whole.
func TestRelinkMemberLargerThanDeclared(t *testing.T) {
	fx := build(t)
	orig, err := os.ReadFile(fx.wheel)
	if err != nil {
		t.Fatal(err)
	}
	z := readZip(t, fx.wheel)
	zf := z[provider]
	// Halve the uncompressed size in the local header and the central
	// directory (offsets 22 and 24 past each record's signature).
	bad := append([]byte(nil), orig...)
	var want [4]byte
	binary.LittleEndian.PutUint32(want[:], uint32(zf.UncompressedSize64))
	patched := 0
	for i := 0; i+4 <= len(bad); i++ {
		if bytes.Equal(bad[i:i+4], want[:]) {
			binary.LittleEndian.PutUint32(bad[i:], uint32(zf.UncompressedSize64/2))
			patched++
		}
	}
	if patched < 2 {
		t.Fatalf("found the size %d only %d times", zf.UncompressedSize64, patched)
	}
	in := filepath.Join(t.TempDir(), wheelName)
	if err := os.WriteFile(in, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = wheel.Relink(context.Background(), in, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: filepath.Join(t.TempDir(), "out")})
	// The limit stops the inflation (the CRC/size check after it would
	// only catch this once the whole member had been written).
	if err == nil || !strings.Contains(err.Error(), provider) || !strings.Contains(err.Error(), "inflates to more than the size its header declares") {
		t.Fatalf("a member larger than declared: %v", err)
	}
}

// FuzzRelink: whatever the bytes of the wheel, relinking either fails with
// nothing written and the input untouched, or writes a wheel that reads
// back; it never panics.
func FuzzRelink(f *testing.F) {
	fx := build(f)
	orig, err := os.ReadFile(fx.wheel)
	if err != nil {
		f.Fatal(err)
	}
	// flags picks options: 1 --replace-bundled, 2 --drop-bundled,
	// 4 --ignore 'libMIOpen*', 8 --allow-unresolved.
	f.Add(orig, byte(0))
	f.Add(orig[:len(orig)/2], byte(0))
	f.Add(orig, byte(1|2|4))
	f.Add(orig, byte(2|8))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte, flags byte) {
		work, err := os.MkdirTemp(dir, "run")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(work)
		in := filepath.Join(work, wheelName)
		if err := os.WriteFile(in, b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(work, "out")
		o := wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out,
			ReplaceBundled: flags&1 != 0, DropBundled: flags&2 != 0, AllowUnresolved: flags&8 != 0}
		if flags&4 != 0 {
			o.Ignore = []string{"libMIOpen*"}
		}
		_, err = wheel.Relink(context.Background(), in, o)
		if got, _ := os.ReadFile(in); !bytes.Equal(got, b) {
			t.Fatalf("the input changed (err %v)", err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), in) {
				t.Errorf("the error does not name the wheel: %v", err)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Fatalf("failed (%v) but wrote %v", err, ents)
			}
			return
		}
		z, err := zip.OpenReader(filepath.Join(out, wheelName))
		if err != nil {
			t.Fatalf("relinked, but the result does not open: %v", err)
		}
		z.Close()
	})
}

// A relink whose context is cancelled stops with the context's error and
// leaves nothing in the output directory.
func TestRelinkCancelled(t *testing.T) {
	fx := build(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(fx.dir, "out")
	_, err := wheel.Relink(ctx, fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("cancelled, but the output directory holds %v", ents)
	}
}

// memberBytes adds up the sizes that size gives for the members of the
// wheel at path it counts.
func memberBytes(t *testing.T, path string, size func(*zip.File) (uint64, bool)) uint64 {
	t.Helper()
	z, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var n uint64
	for _, zf := range z.File {
		if k, ok := size(zf); ok {
			n += k
		}
	}
	return n
}

func isLibrary(name string) bool {
	return strings.HasSuffix(name, ".so") || strings.Contains(name, ".so.")
}

// A wheel whose native libraries do not fit where they are staged
// ($TMPDIR) is refused before anything is written, saying how much they
// take and how much is free; with exactly enough room it is relinked.
func TestRelinkNoRoomToStage(t *testing.T) {
	fx := build(t)
	need := memberBytes(t, fx.wheel, func(zf *zip.File) (uint64, bool) { return zf.UncompressedSize64, isLibrary(zf.Name) })
	before, _ := os.ReadFile(fx.wheel)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var asked []string
	free := need - 1
	o := wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: filepath.Join(fx.dir, "out")}, wheel.Tuning{FreeSpace: func(dir string) (uint64, bool) {
		if !strings.HasPrefix(dir, tmp) {
			return math.MaxUint64, true // the output's disk
		}
		asked = append(asked, dir)
		return free, true
	}})
	out := o.Output
	_, err := wheel.Relink(context.Background(), fx.wheel, o)
	want := fmt.Sprintf("inflating its 3 native libraries for editing takes %d bytes under %s, which has %d bytes free: set TMPDIR",
		need, tmp, need-1)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), fx.wheel+": ") {
		t.Fatalf("err = %v, want it to name the wheel and say %q", err, want)
	}
	if len(asked) != 1 || filepath.Dir(asked[0]) != tmp {
		t.Errorf("free space read for %q, want one directory under TMPDIR %s", asked, tmp)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused, but the output directory holds %v", ents)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("refused, but TMPDIR holds %v", ents)
	}
	if after, _ := os.ReadFile(fx.wheel); !bytes.Equal(before, after) {
		t.Error("the input wheel changed")
	}
	free = need
	if _, err := wheel.Relink(context.Background(), fx.wheel, o); err != nil {
		t.Fatalf("with exactly enough room: %v", err)
	}
}

// A new wheel whose entries copied as they are do not fit on the output's
// disk is refused before anything is written; with room for exactly them
// it is written (the ELF members and RECORD come on top, so the real
// check is the disk's; this one only catches what cannot succeed).
func TestRelinkNoRoomForOutput(t *testing.T) {
	fx := build(t)
	least := memberBytes(t, fx.wheel, func(zf *zip.File) (uint64, bool) {
		copied := !isLibrary(zf.Name) && !strings.HasSuffix(zf.Name, "/RECORD") && !strings.HasSuffix(zf.Name, "/RECORD.jws")
		return zf.CompressedSize64, copied
	})
	out := filepath.Join(fx.dir, "out")
	free := least - 1
	o := wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out}, wheel.Tuning{FreeSpace: func(dir string) (uint64, bool) {
		if dir != out {
			return math.MaxUint64, true // the staging directory's
		}
		return free, true
	}})
	_, err := wheel.Relink(context.Background(), fx.wheel, o)
	want := fmt.Sprintf("%s: the new wheel takes at least %d bytes (the entries copied as they are), and %s has %d bytes free", fx.wheel, least, out, least-1)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("refused, but the output directory holds %v", ents)
	}
	free = least
	if _, err := wheel.Relink(context.Background(), fx.wheel, o); err != nil {
		t.Fatalf("with room for the copied entries: %v", err)
	}
}

// An unpacked wheel is relinked in place: the changed provider is
// replaced, the dropped graft removed, and RECORD lists each remaining
// file's digest and size as they are on disk.
func TestRelinkDirectoryUpdatesRecord(t *testing.T) {
	fx := build(t)
	dir := filepath.Join(fx.dir, "unpacked")
	for name, f := range readZip(t, fx.wheel) {
		dst := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, content(t, f), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(provider)))
	p, err := wheel.Relink(context.Background(), dir, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "directory" || !p.Written {
		t.Fatalf("plan = %+v", p)
	}
	after, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(provider)))
	if bytes.Equal(before, after) {
		t.Fatalf("the provider was not rewritten")
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(graft))); !os.IsNotExist(err) {
		t.Errorf("the dropped graft is still there: %v", err)
	}
	rec, err := os.ReadFile(filepath.Join(dir, distInfo, "RECORD"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, l := range strings.Split(strings.TrimSpace(string(rec)), "\n") {
		parts := strings.Split(l, ",")
		if parts[0] == distInfo+"/RECORD" {
			continue
		}
		if parts[0] == graft {
			t.Errorf("RECORD still lists the dropped graft")
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(parts[0])))
		if err != nil {
			t.Errorf("RECORD lists %s: %v", parts[0], err)
			continue
		}
		if parts[1] != record.Hash(data) || parts[2] != strconv.Itoa(len(data)) {
			t.Errorf("RECORD line %q does not match the file", l)
		}
		seen++
	}
	if seen < 6 {
		t.Errorf("RECORD lists %d files:\n%s", seen, rec)
	}
}

// The new wheel is fsynced once, whole, before it is renamed into place.
func TestRelinkFsyncsTheWholeWheel(t *testing.T) {
	fx := buildWith(t, "", map[string][]byte{"onnxruntime/capi/kernels.bin": bytes.Repeat([]byte("k"), 3<<20)})
	opts := wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: filepath.Join(fx.dir, "out")}
	var sizes []int64
	var mu sync.Mutex
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.WithTuning(opts, wheel.Tuning{Sync: func(f *os.File) error {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		mu.Lock()
		sizes = append(sizes, st.Size())
		mu.Unlock()
		return f.Sync()
	}}))
	if err != nil {
		t.Fatal(err)
	}
	final, err := os.Stat(p.Output)
	if err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 1 || sizes[0] != final.Size() {
		t.Errorf("fsyncs at sizes %v; the wheel is %d bytes", sizes, final.Size())
	}
}

// An error of the final fsync (the one before the rename) fails the relink
// with the wheel named, and nothing is left in the output directory.
func TestRelinkFinalFsyncError(t *testing.T) {
	fx := build(t)
	boom := errors.New("injected fsync error")
	out := filepath.Join(fx.dir, "out")
	_, err := wheel.Relink(context.Background(), fx.wheel, wheel.WithTuning(wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out},
		wheel.Tuning{Sync: func(*os.File) error { return boom }}))
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), fx.wheel) {
		t.Fatalf("relink with a failing fsync: %v", err)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// torchWheel builds a PyTorch-shaped ROCm wheel: torch/lib/libtorch_hip.so
// (RUNPATH $ORIGIN) needs the wheel's own libc10.so and its copies of ROCm
// libraries under their own names: libamdhip64.so and libMIOpen.so
// (unversioned SONAMEs, as PyTorch ships them) and librocblas.so.4 (the
// target's own name). torch_init returns 1 where every call reached a
// target library, 0 where one reached a copy. The target prefix has
// libamdhip64.so.6 (and .so.5), libMIOpen.so.1 and librocblas.so.4. Like PyTorch's,
// the wheel carries AMDGPU code objects (rocBLAS kernels) and, here, an
// object file: ELF files that relink has nothing to do with.
var torchData = map[string]string{
	"torch/lib/rocblas/library/Kernels.so-000-gfx90a.hsaco": "k-gfx90a_xnackoff.co",
	"torch/lib/rocblas/library/TensileLibrary_gfx803.co":    "k-gfx803.o",
	"torch/share/archive_a.o":                               "archive_a.o",
}

func torchWheel(t *testing.T) (whl, prefix string) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	prefix = filepath.Join(dir, "rocm")
	lib := filepath.Join(prefix, "lib")
	ccLib(t, gcc, filepath.Join(lib, "libamdhip64.so.6"), "libamdhip64.so.6", "int hipMalloc(void){return 1;}\n")
	// An older major beside it, first in the directory: not the one an
	// unversioned copy is pointed at.
	ccLib(t, gcc, filepath.Join(lib, "libamdhip64.so.5"), "libamdhip64.so.5", "int hipMalloc(void){return 0;}\n")
	ccLib(t, gcc, filepath.Join(lib, "libMIOpen.so.1"), "libMIOpen.so.1", "int miopenCreate(void){return 1;}\n")
	ccLib(t, gcc, filepath.Join(lib, "librocblas.so.4"), "librocblas.so.4", "int rocblas_create_handle(void){return 1;}\n")
	stage := filepath.Join(dir, "stage", "torch", "lib")
	ccLib(t, gcc, filepath.Join(stage, "libamdhip64.so"), "libamdhip64.so", "int hipMalloc(void){return 0;}\n")
	ccLib(t, gcc, filepath.Join(stage, "libMIOpen.so"), "libMIOpen.so", "int miopenCreate(void){return 0;}\n",
		filepath.Join(stage, "libamdhip64.so"), "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	ccLib(t, gcc, filepath.Join(stage, "librocblas.so.4"), "librocblas.so.4", "int rocblas_create_handle(void){return 0;}\n")
	ccLib(t, gcc, filepath.Join(stage, "libc10.so"), "libc10.so", "int c10_fn(void){return 1;}\n")
	ccLib(t, gcc, filepath.Join(stage, "libtorch_hip.so"), "libtorch_hip.so",
		"extern int hipMalloc(void), miopenCreate(void), rocblas_create_handle(void), c10_fn(void);\n"+
			"int torch_init(void){return hipMalloc() && miopenCreate() && rocblas_create_handle() && c10_fn();}\n",
		filepath.Join(stage, "libamdhip64.so"), filepath.Join(stage, "libMIOpen.so"), filepath.Join(stage, "librocblas.so.4"),
		filepath.Join(stage, "libc10.so"), "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	// The extension module takes PyLong_FromLong from the interpreter.
	ccLib(t, gcc, filepath.Join(stage, "..", "_C.cpython-311-x86_64-linux-gnu.so"), "_C.cpython-311-x86_64-linux-gnu.so",
		"extern void *PyLong_FromLong(long); extern int torch_init(void);\nvoid *PyInit__C(void){return PyLong_FromLong(torch_init());}\n",
		filepath.Join(stage, "libtorch_hip.so"), "-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib")
	const di = "torch-2.5.1+rocm6.2.dist-info"
	files := map[string][]byte{
		"torch/__init__.py": []byte("# torch\n"),
		di + "/METADATA":    []byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+rocm6.2\n"),
		di + "/WHEEL":       []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
	}
	ext, err := os.ReadFile(filepath.Join(stage, "..", "_C.cpython-311-x86_64-linux-gnu.so"))
	if err != nil {
		t.Fatal(err)
	}
	files["torch/_C.cpython-311-x86_64-linux-gnu.so"] = ext
	order := []string{"torch/__init__.py", "torch/_C.cpython-311-x86_64-linux-gnu.so"}
	for _, n := range []string{"libtorch_hip.so", "libc10.so", "libamdhip64.so", "libMIOpen.so", "librocblas.so.4"} {
		b, err := os.ReadFile(filepath.Join(stage, n))
		if err != nil {
			t.Fatal(err)
		}
		files["torch/lib/"+n] = b
		order = append(order, "torch/lib/"+n)
	}
	for _, n := range slices.Sorted(maps.Keys(torchData)) {
		b, err := os.ReadFile(testenv.Testdata(torchData[n]))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
		order = append(order, n)
	}
	order = append(order, di+"/METADATA", di+"/WHEEL", di+"/RECORD")
	whl = filepath.Join(dir, "in", "torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl")
	writeWheel(t, whl, order, files, func(string) bool { return false })
	return whl, prefix
}

// loadTorch extracts torch/lib from the wheel and calls torch_init through
// the real loader (python3 ctypes).
func loadTorch(t *testing.T, whl string) string {
	py := testenv.Tool(t, "python3", "python3")
	dir := filepath.Join(t.TempDir(), "torch", "lib")
	os.MkdirAll(dir, 0o755)
	for name, zf := range readZip(t, whl) {
		if strings.HasPrefix(name, "torch/lib/") {
			os.WriteFile(filepath.Join(dir, path.Base(name)), content(t, zf), 0o755)
		}
	}
	out, err := exec.Command(py, "-c", "import ctypes,sys; print(ctypes.CDLL(sys.argv[1]).torch_init())", filepath.Join(dir, "libtorch_hip.so")).CombinedOutput()
	if err != nil {
		t.Fatalf("loading the relinked libtorch_hip.so: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// PyTorch's ROCm wheels carry the ROCm libraries in torch/lib under their
// own names, found through RUNPATH $ORIGIN: they shadow the target. By
// default they are kept, each reference with a note naming the target
// library it shadows; --replace-bundled points the references at the
// target, and --drop-bundled removes the copies, after which the real
// loader binds every call to the target. A copy that has the target's own
// file name shadows it as long as it stays: relink refuses to write then.
// The extension module's Py* references, which the interpreter defines,
// are notes as in check, not a reason to refuse (they were errors, so no
// wheel with an extension module could be relinked without
// --allow-unresolved), and they name the wheel's file, not the scratch
// copy.
func TestRelinkReplacesBundledCopies(t *testing.T) {
	whl, prefix := torchWheel(t)
	if got := loadTorch(t, whl); got != "0" {
		t.Fatalf("the input's libtorch_hip.so gave %s, want 0 (its bundled copies)", got)
	}
	needs := func(p *wheel.Plan, file string) map[string]wheel.Need {
		m := map[string]wheel.Need{}
		for _, fp := range p.Files {
			if fp.Path == file {
				for _, n := range fp.Needed {
					m[n.Name] = n
				}
			}
		}
		return m
	}
	// Kept by default, with a note.
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range needs(p, "torch/lib/libtorch_hip.so") {
		if name == "libc10.so" {
			if n.Class != wheel.InWheel || n.Note != "" {
				t.Errorf("libc10.so: %+v", n)
			}
			continue
		}
		if n.Class != wheel.InWheel || !strings.Contains(n.Note, "--replace-bundled") || !strings.Contains(n.Note, filepath.Join(prefix, "lib")) {
			t.Errorf("%s without --replace-bundled: %+v", name, n)
		}
	}
	// Replaced but not dropped: the copy named librocblas.so.4 still wins.
	out := filepath.Join(filepath.Dir(whl), "..", "out")
	p, err = wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, ReplaceBundled: true, Output: out})
	if !errors.Is(err, wheel.ErrRefused) {
		t.Fatalf("a copy left shadowing the target: err %v", err)
	}
	shadowed := 0
	for _, f := range p.Findings {
		if f.Rule == "shadowed-target" && f.Library == "librocblas.so.4" && f.File == "torch/lib/libtorch_hip.so" &&
			strings.Contains(f.Message, "torch/lib/librocblas.so.4") && strings.Contains(f.Fix, "--drop-bundled") {
			shadowed++
		}
	}
	if shadowed != 1 || p.Written {
		t.Fatalf("findings %+v, written %v", p.Findings, p.Written)
	}
	// Replaced and dropped.
	p, err = wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, ReplaceBundled: true, DropBundled: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, f := range p.Findings {
		if strings.Contains(f.Message, os.TempDir()) {
			t.Errorf("a finding names a scratch file: %s", f.Message)
		}
		if f.Rule == finding.RuleModuleUndefined && f.Severity == finding.SeverityNote && f.Symbol == "PyLong_FromLong" &&
			f.File == "torch/_C.cpython-311-x86_64-linux-gnu.so" && strings.Contains(f.Message, "(torch/_C.cpython-311-x86_64-linux-gnu.so)") {
			notes++
		}
	}
	if notes != 1 {
		t.Errorf("findings %+v: want one note for the extension's PyLong_FromLong", p.Findings)
	}
	n := needs(p, "torch/lib/libtorch_hip.so")
	for name, want := range map[string]string{"libamdhip64.so": "libamdhip64.so.6", "libMIOpen.so": "libMIOpen.so.1", "librocblas.so.4": "librocblas.so.4"} {
		if n[name].Class != wheel.Bundled || n[name].Replacement != want {
			t.Errorf("%s: %+v, want bundled, replaced by %s", name, n[name], want)
		}
	}
	if want := []string{"torch/lib/libMIOpen.so", "torch/lib/libamdhip64.so", "torch/lib/librocblas.so.4"}; !slices.Equal(p.Drop, want) {
		t.Errorf("dropped %v, want %v", p.Drop, want)
	}
	// A dropped copy may still be dlopen()ed by its name: said where the
	// target has no file of that name (it has librocblas.so.4).
	dlopenNotes := map[string]bool{}
	for _, n := range p.Notes {
		if strings.Contains(n, "dlopen(") {
			dlopenNotes[strings.Fields(n)[1]] = true
		}
	}
	if want := map[string]bool{"torch/lib/libMIOpen.so,": true, "torch/lib/libamdhip64.so,": true}; !maps.Equal(dlopenNotes, want) {
		t.Errorf("dlopen notes %v, want %v (notes %q)", dlopenNotes, want, p.Notes)
	}
	z := readZip(t, p.Output)
	b := content(t, z["torch/lib/libtorch_hip.so"])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), "libtorch_hip.so")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Dynamic()
	if got := strings.Join(d.Needed, " "); got != "libamdhip64.so.6 libMIOpen.so.1 librocblas.so.4 libc10.so" {
		t.Errorf("NEEDED = %s", got)
	}
	if d.RunPath != "$ORIGIN:"+filepath.Join(prefix, "lib") {
		t.Errorf("RUNPATH = %q", d.RunPath)
	}
	verifyRecord(t, z)
	// The code objects and the object file are copied, not relinked.
	orig := readZip(t, whl)
	for n := range torchData {
		for _, fp := range p.Files {
			if fp.Path == n {
				t.Errorf("%s is in the plan", n)
			}
		}
		if orig[n].CRC32 != z[n].CRC32 || orig[n].CompressedSize64 != z[n].CompressedSize64 || orig[n].Modified != z[n].Modified {
			t.Errorf("%s was not copied raw", n)
		}
	}
	if got := loadTorch(t, p.Output); got != "1" {
		t.Fatalf("the relinked libtorch_hip.so gave %s, want 1 (every call bound to the target)", got)
	}
}

// stubROCm makes a target prefix under dir whose lib holds a stub
// libamdhip64.so.6, and returns the prefix and that library.
func stubROCm(t *testing.T, gcc, dir string) (prefix, hip string) {
	prefix = filepath.Join(dir, "rocm")
	return prefix, ccLib(t, gcc, filepath.Join(prefix, "lib", "libamdhip64.so.6"), "libamdhip64.so.6", "int hipMalloc(void){return 0;}\n")
}

// oneLibWheel builds, under dir, a wheel named name holding the library
// prov only (SONAME its base name), compiled from src and linked with
// args, and returns the wheel's path.
func oneLibWheel(t *testing.T, gcc, dir, name, prov, src string, args ...string) string {
	lib := ccLib(t, gcc, filepath.Join(dir, "stage", prov), path.Base(prov), src, args...)
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	di := strings.SplitN(name, "-", 3)
	rec := di[0] + "-" + di[1] + ".dist-info/RECORD"
	whl := filepath.Join(dir, "in", name)
	writeWheel(t, whl, []string{prov, rec}, map[string][]byte{prov: b}, func(string) bool { return false })
	return whl
}

// A NEEDED library left alone with --ignore (libmigraphx_c.so.3 of
// onnxruntime's MIGraphX provider, on a ROCm built without MIGraphX) is
// expected where the wheel is used: missing here, it (with the symbols the
// provider may take from it listed under it) is a note and the wheel is written; without
// --ignore they are errors and nothing is written.
func TestRelinkIgnoredMissingLibrary(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	prefix, hip := stubROCm(t, gcc, dir)
	elsewhere := ccLib(t, gcc, filepath.Join(dir, "elsewhere", "libmigraphx_c.so.3"), "libmigraphx_c.so.3", "int migraphx_init(void){return 0;}\n")
	const prov = "onnxruntime/capi/libonnxruntime_providers_migraphx.so"
	whl := oneLibWheel(t, gcc, dir, wheelName, prov,
		"extern int migraphx_init(void), hipMalloc(void);\nint provider_init(void){return migraphx_init()+hipMalloc();}\n",
		elsewhere, hip, "-Wl,--enable-new-dtags,-rpath,/opt/rocm-6.0.2/lib")
	out := filepath.Join(dir, "out")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, Output: out})
	if !errors.Is(err, wheel.ErrRefused) || p == nil || p.Written {
		t.Fatalf("without --ignore: err %v", err)
	}
	p, err = wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, Ignore: []string{"libmigraphx*"}, Output: out})
	if err != nil || !p.Written {
		t.Fatalf("with --ignore: err %v, plan %+v", err, p)
	}
	got := map[string]finding.Severity{}
	for _, f := range p.Findings {
		got[f.Rule+" "+f.Library+f.Symbol+fmt.Sprint(f.Unresolved)] = f.Severity
	}
	// The symbol it would take from the library is listed under it.
	want := map[string]finding.Severity{
		finding.RuleMissingLibrary + " libmigraphx_c.so.3[migraphx_init]": finding.SeverityNote,
	}
	if !maps.Equal(got, want) {
		t.Errorf("findings %v, want %v", got, want)
	}
	z := readZip(t, p.Output)
	b := content(t, z[prov])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), prov)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Dynamic(); strings.Join(d.Needed, " ") != "libmigraphx_c.so.3 libamdhip64.so.6" || d.RunPath != filepath.Join(prefix, "lib") {
		t.Errorf("NEEDED %v, RUNPATH %q", d.Needed, d.RunPath)
	}
	verifyRecord(t, z)
}

// TestCorpusBundledHIP: a PyTorch-shaped wheel that bundles Debian's real
// libamdhip64.so.5 in torch/lib, under the name the target has too, next
// to a libtorch_hip.so (RUNPATH $ORIGIN) that calls it and the wheel's own
// libc10.so, which keeps $ORIGIN in the new RUNPATH. Pointed at
// /usr/lib/x86_64-linux-gnu, the copy is noted as shadowing it; replaced
// but kept it still wins and relink refuses; replaced and dropped, the
// wheel is written and the real loader loads libtorch_hip.so against the
// system's HIP runtime.
func TestCorpusBundledHIP(t *testing.T) {
	testenv.Corpus(t)
	const sysLib = "/usr/lib/x86_64-linux-gnu"
	hip := testenv.File(t, sysLib+"/libamdhip64.so.5", "libamdhip64-5")
	gcc := testenv.Tool(t, "gcc", "gcc")
	py := testenv.Tool(t, "python3", "python3")
	dir := t.TempDir()
	real, err := os.ReadFile(hip)
	if err != nil {
		t.Fatal(err)
	}
	c10 := ccLib(t, gcc, filepath.Join(dir, "stage", "libc10.so"), "libc10.so", "int c10_fn(void){return 1;}\n")
	torch := ccLib(t, gcc, filepath.Join(dir, "stage", "libtorch_hip.so"), "libtorch_hip.so",
		"extern int hipGetDeviceCount(int *), c10_fn(void);\nint torch_init(void){int n; return hipGetDeviceCount(&n) + c10_fn();}\n",
		hip, c10, "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	tb, err := os.ReadFile(torch)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := os.ReadFile(c10)
	if err != nil {
		t.Fatal(err)
	}
	const di = "torch-2.5.1+rocm6.2.dist-info"
	whl := filepath.Join(dir, "in", "torch-2.5.1+rocm6.2-cp311-cp311-linux_x86_64.whl")
	writeWheel(t, whl, []string{"torch/lib/libtorch_hip.so", "torch/lib/libc10.so", "torch/lib/libamdhip64.so.5", di + "/METADATA", di + "/RECORD"},
		map[string][]byte{"torch/lib/libtorch_hip.so": tb, "torch/lib/libc10.so": cb, "torch/lib/libamdhip64.so.5": real,
			di + "/METADATA": []byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.5.1+rocm6.2\n")}, func(string) bool { return false })
	opts := wheel.Options{LibDirs: []string{sysLib}, DryRun: true}
	p, err := wheel.Relink(context.Background(), whl, opts)
	if err != nil {
		t.Fatal(err)
	}
	noted := false
	for _, fp := range p.Files {
		for _, n := range fp.Needed {
			noted = noted || fp.Path == "torch/lib/libtorch_hip.so" && n.Name == "libamdhip64.so.5" && n.Class == wheel.InWheel &&
				strings.Contains(n.Note, sysLib+"/libamdhip64.so.5") && strings.Contains(n.Note, "shadows")
		}
	}
	if !noted {
		t.Errorf("the bundled copy is not noted as shadowing the system's: %+v", p.Files)
	}
	opts.DryRun, opts.ReplaceBundled, opts.Output = false, true, filepath.Join(dir, "out")
	if p, err = wheel.Relink(context.Background(), whl, opts); !errors.Is(err, wheel.ErrRefused) {
		t.Fatalf("replaced but kept: err %v, findings %+v", err, p.Findings)
	}
	opts.DropBundled = true
	if p, err = wheel.Relink(context.Background(), whl, opts); err != nil {
		t.Fatalf("replaced and dropped: %v", err)
	}
	if !slices.Equal(p.Drop, []string{"torch/lib/libamdhip64.so.5"}) {
		t.Errorf("dropped %v", p.Drop)
	}
	z := readZip(t, p.Output)
	if z["torch/lib/libamdhip64.so.5"] != nil {
		t.Error("the copy is still in the wheel")
	}
	verifyRecord(t, z)
	so := filepath.Join(dir, "torch", "lib", "libtorch_hip.so")
	os.MkdirAll(filepath.Dir(so), 0o755)
	os.WriteFile(so, content(t, z["torch/lib/libtorch_hip.so"]), 0o755)
	os.WriteFile(filepath.Join(dir, "torch", "lib", "libc10.so"), content(t, z["torch/lib/libc10.so"]), 0o755)
	load := "import ctypes,sys; ctypes.CDLL(sys.argv[1]); print(open('/proc/self/maps').read())"
	out, err := exec.Command(py, "-c", load, so).CombinedOutput()
	if err != nil {
		t.Fatalf("the relinked libtorch_hip.so does not load: %v\n%s", err, out)
	}
	if real, _ := filepath.EvalSymlinks(hip); !strings.Contains(string(out), real) {
		t.Errorf("the loaded process does not map the system's %s", real)
	}
}

// A NEEDED entry left alone with --ignore that the wheel satisfies itself
// (here the auditwheel graft) stays satisfied: the copy is not dropped by
// --drop-bundled and its directory stays in the RUNPATH. Before, the
// graft was dropped and $ORIGIN/../../onnxruntime_rocm.libs left out, so
// the written provider needed a library nothing provided.
func TestRelinkIgnoredInWheelLibraryStays(t *testing.T) {
	fx := build(t)
	p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true,
		DropBundled: true, Ignore: []string{"libamdhip64*"}, Output: filepath.Join(fx.dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Drop) != 0 {
		t.Errorf("dropped %v", p.Drop)
	}
	for _, f := range p.Findings {
		if f.Severity != finding.SeverityNote {
			t.Errorf("finding %+v", f)
		}
	}
	z := readZip(t, p.Output)
	if z[graft] == nil {
		t.Fatal("the graft is gone")
	}
	b := content(t, z[provider])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), provider)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.Dynamic()
	if d.Needed[0] != path.Base(graft) || !slices.Contains(d.RunPathList(), "$ORIGIN/../../onnxruntime_rocm.libs") {
		t.Errorf("NEEDED %v, RUNPATH %q", d.Needed, d.RunPath)
	}
	pythonChecks(t, fx, p.Output)
}

// With --drop-bundled, copies that are only to be dropped are not
// extracted (a PyTorch wheel's bundled ROCm libraries are GBs to inflate
// for nothing): a damaged bundled copy does not stop the relink. A copy
// whose references are left alone with --ignore is kept, so it is
// extracted, and its damage is an error naming it.
func TestRelinkDoesNotExtractDroppedCopies(t *testing.T) {
	whl, prefix := torchWheel(t)
	damage(t, whl, "torch/lib/libMIOpen.so")
	out := filepath.Join(filepath.Dir(whl), "..", "out")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, ReplaceBundled: true, DropBundled: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Drop, "torch/lib/libMIOpen.so") {
		t.Errorf("dropped %v", p.Drop)
	}
	verifyRecord(t, readZip(t, p.Output))
	if got := loadTorch(t, p.Output); got != "1" {
		t.Fatalf("the relinked libtorch_hip.so gave %s, want 1", got)
	}
	_, err = wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, ReplaceBundled: true, DropBundled: true,
		Ignore: []string{"libMIOpen*"}, Output: out})
	if err == nil || !strings.Contains(err.Error(), whl+"!/torch/lib/libMIOpen.so: ") {
		t.Fatalf("a kept damaged copy: err %v", err)
	}
}

// damage rewrites the wheel with member's CRC-32 off by one.
func damage(t *testing.T, whl, member string) {
	t.Helper()
	found := false
	rewriteZip(t, whl, 0, func(h *zip.FileHeader) {
		if h.Name == member {
			h.CRC32++
			h.Flags &^= 0x8 // sizes and CRC in the header
			found = true
		}
	})
	if !found {
		t.Fatalf("no member %s", member)
	}
}

// A library with a DT_RPATH (--disable-new-dtags) gets a DT_RUNPATH: the
// plan says the old list was an RPATH, which its dependencies inherited.
func TestRelinkRPathBecomesRunPath(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	prefix, hip := stubROCm(t, gcc, dir)
	const prov = "pkg/libprov.so"
	whl := oneLibWheel(t, gcc, dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl", prov, "extern int hipMalloc(void);\nint f(void){return hipMalloc();}\n",
		hip, "-Wl,--disable-new-dtags,-rpath,/opt/rocm-6.0.2/lib")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, Output: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 || !p.Files[0].OldIsRPath || p.Files[0].OldRunPath != "/opt/rocm-6.0.2/lib" {
		t.Fatalf("plan %+v", p.Files)
	}
	b := content(t, readZip(t, p.Output)[prov])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), prov)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Dynamic(); d.HasRPath || !d.HasRunPath || d.RunPath != filepath.Join(prefix, "lib") {
		t.Errorf("RPATH %v %q, RUNPATH %v %q", d.HasRPath, d.RPath, d.HasRunPath, d.RunPath)
	}
}

// The same for an unpacked wheel: a copy that is only to be dropped is
// neither copied nor read (here it is not even a well-formed ELF file),
// and the relink removes it from the directory and from RECORD.
func TestRelinkDirectoryDoesNotStageDroppedCopies(t *testing.T) {
	whl, prefix := torchWheel(t)
	dir := filepath.Join(filepath.Dir(whl), "unpacked")
	for name, zf := range readZip(t, whl) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, content(t, zf), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	copyPath := filepath.Join(dir, "torch", "lib", "libMIOpen.so")
	b, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copyPath, append(b[:64:64], bytes.Repeat([]byte{0xff}, 64)...), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := wheel.Relink(context.Background(), dir, wheel.Options{ROCm: []string{prefix}, ReplaceBundled: true, DropBundled: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Written || !slices.Contains(p.Drop, "torch/lib/libMIOpen.so") {
		t.Fatalf("written %v, dropped %v", p.Written, p.Drop)
	}
	if _, err := os.Stat(copyPath); !os.IsNotExist(err) {
		t.Errorf("the dropped copy is still there: %v", err)
	}
	rec, err := os.ReadFile(filepath.Join(dir, "torch-2.5.1+rocm6.2.dist-info", "RECORD"))
	if err != nil || strings.Contains(string(rec), "libMIOpen.so") {
		t.Errorf("RECORD (%v) still lists the dropped copy:\n%s", err, rec)
	}
}

// A malformed ELF member is an error that names the wheel and the member,
// not the scratch copy relink staged it to.
func TestRelinkMalformedMemberNamed(t *testing.T) {
	good, err := os.ReadFile(testenv.Testdata("libfoo.so.1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	whl := filepath.Join(dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl")
	bad := append(good[:64:64], bytes.Repeat([]byte{0xff}, 200)...)
	writeWheel(t, whl, []string{"pkg/libbad.so", "pkg-1.0.dist-info/RECORD"}, map[string][]byte{"pkg/libbad.so": bad}, func(string) bool { return false })
	_, err = wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{dir}, DryRun: true})
	if err == nil || !strings.HasPrefix(err.Error(), whl+"!/pkg/libbad.so: ") || strings.Contains(err.Error(), "rocmdoctor-wheel-") {
		t.Fatalf("err %v", err)
	}
	var fe *elfx.FormatError
	if !errors.As(err, &fe) {
		t.Errorf("the reader's error is not wrapped: %T", err)
	}
	// Unpacked, and installed: the file is named by its path on disk.
	for _, c := range []struct{ kind, input, root string }{
		{"directory", filepath.Join(dir, "unpacked"), filepath.Join(dir, "unpacked")},
		{"installed", filepath.Join(dir, "site", "pkg-1.0.dist-info"), filepath.Join(dir, "site")},
	} {
		lib := filepath.Join(c.root, "pkg", "libbad.so")
		for p, b := range map[string][]byte{lib: bad, filepath.Join(c.root, "pkg-1.0.dist-info", "RECORD"): []byte("pkg/libbad.so,,\npkg-1.0.dist-info/RECORD,,\n")} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := wheel.Relink(context.Background(), c.input, wheel.Options{LibDirs: []string{dir}, DryRun: true})
		if err == nil || !strings.HasPrefix(err.Error(), lib+": ") || strings.Contains(err.Error(), "rocmdoctor-wheel-") {
			t.Errorf("%s: err %v, want it to begin with %s", c.kind, err, lib)
		}
	}
}

// A NEEDED entry without a version (libamdhip64.so, from a library linked
// against an unversioned copy) is no major change: pointed at the target's
// libamdhip64.so.6 without --allow-soname-change, with a note; and where
// the target has a file of that very name (its development link), the
// loader finds that, and the entry is left as it is.
func TestRelinkUnversionedNeeded(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	prefix, _ := stubROCm(t, gcc, dir)
	unversioned := ccLib(t, gcc, filepath.Join(dir, "elsewhere", "libamdhip64.so"), "libamdhip64.so", "int hipMalloc(void){return 0;}\n")
	const prov = "pkg/libprov.so"
	whl := oneLibWheel(t, gcc, dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl", prov, "extern int hipMalloc(void);\nint f(void){return hipMalloc();}\n",
		unversioned, "-Wl,--enable-new-dtags,-rpath,/opt/rocm-6.0.2/lib")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, Output: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	n := p.Files[0].Needed[0]
	if n.Class != wheel.SONAMEChange || n.Replacement != "libamdhip64.so.6" || !strings.Contains(n.Note, "no version") {
		t.Errorf("need %+v", n)
	}
	b := content(t, readZip(t, p.Output)[prov])
	f, err := elfx.NewFileSize(bytes.NewReader(b), int64(len(b)), prov)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := f.Dynamic(); d.Needed[0] != "libamdhip64.so.6" {
		t.Errorf("NEEDED %v", d.Needed)
	}
	// With the development link in the target.
	if err := os.Symlink("libamdhip64.so.6", filepath.Join(prefix, "lib", "libamdhip64.so")); err != nil {
		t.Fatal(err)
	}
	p, err = wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Files[0].Needed[0]; n.Class != wheel.Target || n.Replacement != "" || n.Resolved != filepath.Join(prefix, "lib", "libamdhip64.so") {
		t.Errorf("with the link: need %+v", n)
	}
}

// A wheel with no native code (a pure-Python one given by mistake) says
// there was nothing to relink, and the new wheel holds the same entries.
func TestRelinkPureWheel(t *testing.T) {
	dir := t.TempDir()
	whl := filepath.Join(dir, "pure-1.0-py3-none-any.whl")
	order := []string{"pure/__init__.py", "pure-1.0.dist-info/METADATA", "pure-1.0.dist-info/RECORD"}
	writeWheel(t, whl, order, map[string][]byte{order[0]: []byte("x = 1\n"), order[1]: []byte("Metadata-Version: 2.1\nName: pure\nVersion: 1.0\n")},
		func(string) bool { return false })
	out := filepath.Join(dir, "out")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{dir}, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 0 || !p.Written || len(p.Notes) != 1 || p.Notes[0] != "no native libraries or executables for the host in it: nothing to relink" {
		t.Errorf("plan: files %d, written %v, notes %q", len(p.Files), p.Written, p.Notes)
	}
	in, got := readZip(t, whl), readZip(t, p.Output)
	if len(got) != len(in) {
		t.Fatalf("entries %d, want %d", len(got), len(in))
	}
	for name, zf := range in {
		if g, ok := got[name]; !ok || g.CRC32 != zf.CRC32 {
			t.Errorf("%s differs or is missing", name)
		}
	}
}

// Entries that do not change are the input's bytes in the new wheel:
// local header (Info-ZIP's extra fields, which differ from the central
// directory's), data and data descriptor (archive/zip's), large or small;
// the central directory keeps the input's order and only the offsets of
// its records change; a second relink keeps them too. Large entries keep
// their data's offset modulo the block size where direct I/O works.
// Python, pip's zip reader, and unzip -t read the result.
func TestRelinkKeepsUnchangedEntriesByteForByte(t *testing.T) {
	zipTool := testenv.Tool(t, "zip", "zip")
	unzipTool := testenv.Tool(t, "unzip", "unzip")
	r := rand.New(rand.NewPCG(3, 4))
	blob := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32() % 7) // compressible, yet not all alike
		}
		return b
	}
	more := map[string][]byte{"onnxruntime/capi/kernels_a.bin": blob(3 << 20), "onnxruntime/capi/kernels_b.bin": blob(2<<20 + 123)}
	fx := buildWith(t, "", more)
	// Repacked by Info-ZIP, as many wheels are (UT and ux fields, local
	// and central extra data that differ); its last entry is rewritten by
	// archive/zip with a data descriptor.
	tree := filepath.Join(fx.dir, "tree")
	for name, f := range readZip(t, fx.wheel) {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		os.MkdirAll(filepath.Dir(filepath.Join(tree, name)), 0o755)
		os.WriteFile(filepath.Join(tree, name), b, 0o644)
	}
	in := filepath.Join(fx.dir, "in2", filepath.Base(fx.wheel))
	os.MkdirAll(filepath.Dir(in), 0o755)
	cmd := exec.Command(zipTool, "-q", "-r", in, ".")
	cmd.Dir = tree
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v %s", err, out)
	}
	// A large entry after the libraries: the first copy pass skips the
	// libraries, so only the unused space keeps its alignment.
	const tail = "onnxruntime/capi/kernels_tail.bin"
	more[tail] = blob(3<<20 + 77)
	appendWithDescriptor(t, in, tail, more[tail])
	src, _ := os.Open(in)
	probe, _ := os.Create(filepath.Join(fx.dir, "probe"))
	cp := dcopy.New(src, probe)
	direct := cp.Direct()
	cp.Close()
	src.Close()
	probe.Close()
	for round := range 2 {
		out := filepath.Join(fx.dir, fmt.Sprintf("out%d", round))
		p, err := wheel.Relink(context.Background(), in, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out})
		if err != nil {
			t.Fatal(err)
		}
		changed := map[string]bool{}
		for _, fp := range p.Files {
			if len(fp.Edits) > 0 {
				changed[fp.Path] = true
			}
		}
		if round == 0 && len(changed) == 0 {
			t.Fatal("nothing changed: the test needs a relinked library")
		}
		a, b := localRecords(t, in), localRecords(t, p.Output)
		// (The signature of the old RECORD is dropped.)
		a.names = slices.DeleteFunc(a.names, func(n string) bool { return strings.HasSuffix(n, "/RECORD.jws") })
		if !slices.Equal(a.names, b.names) {
			t.Errorf("round %d: central directory order %q, was %q", round, b.names, a.names)
		}
		same := 0
		for name, rec := range a.records {
			switch {
			case strings.HasSuffix(name, "/RECORD") || strings.HasSuffix(name, "/RECORD.jws") || changed[name]:
			case !bytes.Equal(rec, b.records[name]):
				t.Errorf("round %d: %s: local record differs (%d bytes, was %d)", round, name, len(b.records[name]), len(rec))
			default:
				same++
			}
		}
		if same < len(more)+3 {
			t.Errorf("round %d: %d entries compared", round, same)
		}
		// Where direct I/O works, the large ones' data is where it was
		// modulo the block size (unused space before the entry, never in
		// it), so it was written from the old wheel's pages.
		if direct {
			zin, zout := readZip(t, in), readZip(t, p.Output)
			for name := range more {
				ia, _ := zin[name].DataOffset()
				ib, _ := zout[name].DataOffset()
				if (ib-ia)%dcopy.Align != 0 {
					t.Errorf("round %d: %s at %#x, was at %#x: not congruent modulo %d", round, name, ib, ia, dcopy.Align)
				}
			}
		}
		pythonVerifyRecord(t, p.Output)
		if o, err := exec.Command(unzipTool, "-tq", p.Output).CombinedOutput(); err != nil {
			t.Errorf("round %d: unzip -t: %v %s", round, err, o)
		}
		in = p.Output
	}
	// The alignment is only checked where direct I/O works: elsewhere
	// that part of the test did not run, which CI must not pass over.
	if !direct && runtime.GOOS == "linux" && math.MaxInt != math.MaxInt32 {
		testenv.Missing(t, "direct I/O in "+fx.dir, "a file system with O_DIRECT, such as ext4 or XFS, for TMPDIR")
	}
}

// appendWithDescriptor adds an entry written by archive/zip (stored, its
// CRC-32 and sizes in a data descriptor after the data) to the zip file p.
func appendWithDescriptor(t *testing.T, p, name string, data []byte) {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	zr.Close()
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	w.Write(data)
	zw.Close()
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

type zipRecords struct {
	names   []string
	records map[string][]byte // local header through data descriptor
}

// localRecords reads each entry's local record as stored.
func localRecords(t *testing.T, p string) zipRecords {
	t.Helper()
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := zipx.CentralRecords(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	out := zipRecords{records: map[string][]byte{}}
	for _, r := range recs {
		l, err := zipx.LocalOf(bytes.NewReader(raw), r)
		if err != nil {
			t.Fatalf("%s: %s: %v", p, r.Name(), err)
		}
		out.names = append(out.names, r.Name())
		out.records[r.Name()] = raw[l.Header:l.End]
	}
	return out
}

// TestRelinkPlanCarriesWarnings: what resolution works around (a damaged
// ld.so.cache in the resolver's root) is in the plan, once, and still
// reaches the caller's Warn; an intact root gives no warnings field.
func TestRelinkPlanCarriesWarnings(t *testing.T) {
	fx := build(t)
	root := t.TempDir()
	cache := filepath.Join(root, "etc", "ld.so.cache")
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache, []byte("not a cache"), 0o644); err != nil {
		t.Fatal(err)
	}
	var told []string
	relink := func() *wheel.Plan {
		t.Helper()
		o := wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DryRun: true,
			Resolver: rpath.Options{Root: root, Warn: func(m string) { told = append(told, m) }}}
		p, err := wheel.Relink(context.Background(), fx.wheel, o)
		if p == nil {
			t.Fatal(err)
		}
		return p
	}
	p := relink()
	if len(p.Warnings) != 1 || !strings.HasPrefix(p.Warnings[0], cache+": ") {
		t.Errorf("plan warnings %q, want one about %s", p.Warnings, cache)
	}
	if len(told) != 1 || len(p.Warnings) == 1 && told[0] != p.Warnings[0] {
		t.Errorf("the caller's Warn was told %q", told)
	}
	b, _ := json.Marshal(p)
	if !bytes.Contains(b, []byte(`"warnings":[`)) {
		t.Errorf("no warnings in the JSON plan: %s", b)
	}
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	if p := relink(); p.Warnings != nil {
		t.Errorf("without a cache: warnings %q", p.Warnings)
	}
}

// A library that takes nothing from the target keeps its run path, less
// the entries that resolve against the working directory: relative ones,
// and those whose first token is not $ORIGIN as ld.so reads it
// ($ORIGINAL/x is a directory named "$ORIGINAL", $LIB/x is "lib64/x").
func TestRelinkKeepsRunPathWithoutTarget(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	prefix, _ := stubROCm(t, gcc, dir)
	const prov = "pkg/libplain.so"
	whl := oneLibWheel(t, gcc, dir, "pkg-1.0-cp311-cp311-linux_x86_64.whl", prov, "int f(void){return 1;}\n",
		`-Wl,--enable-new-dtags,-rpath,$ORIGIN/../x:$ORIGINAL/y:${ORIGIN}:rel/z:$LIB/w:/usr/lib/q`)
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{ROCm: []string{prefix}, Output: filepath.Join(dir, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 {
		t.Fatalf("plan %+v", p.Files)
	}
	if got, want := p.Files[0].NewRunPath, "$ORIGIN/../x:${ORIGIN}:/usr/lib/q"; got != want {
		t.Errorf("new run path %q, want %q (old %q)", got, want, p.Files[0].OldRunPath)
	}
}

// staleRecord is RECORD text rec as hand edits leave it: the line of the
// library shared (which a relink leaves as it is) with another file's hash
// (its bytes edited after RECORD was made), METADATA's size off by one,
// top_level.txt not listed.
func staleRecord(t *testing.T, rec string) string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(rec), "\n") {
		parts := strings.Split(l, ",")
		switch parts[0] {
		case shared:
			l = parts[0] + "," + record.Hash([]byte("the library as it was")) + "," + parts[2]
		case distInfo + "/METADATA":
			n, _ := strconv.Atoi(parts[2])
			l = parts[0] + "," + parts[1] + "," + strconv.Itoa(n+1)
		case distInfo + "/top_level.txt":
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n"
}

// A wheel whose RECORD was left stale by hand edits comes out of a relink
// with a RECORD that matches every entry (check, which fails the input
// with RD1501, passes the output), and the plan says which lines were
// written anew: the library relink leaves as it is is hashed from its
// staged copy, an entry whose size differs from its line and one RECORD
// does not list are hashed from the wheel. Before, the stale lines were
// copied into the new RECORD. The same for an unpacked tree patched in
// place.
func TestRelinkRewritesStaleRecordLines(t *testing.T) {
	fx := build(t)
	// The wheel again, with the stale RECORD.
	in := readZipList(t, fx.wheel)
	z := readZip(t, fx.wheel)
	stale := filepath.Join(fx.dir, "stale", wheelName)
	os.MkdirAll(filepath.Dir(stale), 0o755)
	fh, err := os.Create(stale)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(fh)
	for _, n := range in {
		b := content(t, z[n])
		if n == distInfo+"/RECORD" {
			b = []byte(staleRecord(t, string(b)))
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate})
		w.Write(b)
	}
	zw.Close()
	fh.Close()
	rd1501 := func(path string) []string {
		rep, err := check.Run(context.Background(), []string{path}, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Findings {
			if f.ID == "RD1501" {
				got = append(got, strings.TrimPrefix(f.File, path+"!/"))
			}
		}
		slices.Sort(got)
		return got
	}
	if got, want := rd1501(stale), []string{shared, distInfo + "/METADATA", distInfo + "/top_level.txt"}; !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Fatalf("check on the stale wheel: RD1501 on %q, want %q", got, want)
	}
	out := filepath.Join(fx.dir, "out")
	p, err := wheel.Relink(context.Background(), stale, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	verifyRecord(t, readZip(t, p.Output))
	if got := rd1501(p.Output); len(got) != 0 {
		t.Errorf("check on the relinked wheel: RD1501 on %q", got)
	}
	notes := strings.Join(p.Notes, "\n")
	for _, want := range []string{"RECORD's line for " + shared + " (", "RECORD's line for " + distInfo + "/METADATA (", distInfo + "/top_level.txt was not listed in RECORD: added"} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in\n%s", want, notes)
		}
	}

	// An unpacked tree: the library's line is written from the file.
	dir := filepath.Join(fx.dir, "unpacked")
	for name, f := range z {
		b := content(t, f)
		if name == distInfo+"/RECORD" {
			b = []byte(staleRecord(t, string(b)))
		}
		dst := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p, err = wheel.Relink(context.Background(), dir, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, DropBundled: true, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := os.ReadFile(filepath.Join(dir, distInfo, "RECORD"))
	lib, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(shared)))
	if want := record.Line(shared, record.Hash(lib), int64(len(lib))); !strings.Contains(string(rec), want+"\n") {
		t.Errorf("RECORD of the tree has no line %q:\n%s", want, rec)
	}
	if !strings.Contains(strings.Join(p.Notes, "\n"), "RECORD's line for "+shared+" (") {
		t.Errorf("tree: no note on the library's line: %q", p.Notes)
	}
}

// Member names pip refuses or installs as something else are refused,
// naming the member; a directory entry carrying an empty deflate stream
// (Python's zipfile.writestr("pkg/", "") in a deflated zip) is accepted,
// and the output passes unzip -t and installs with pip.
func TestRelinkMemberNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		header zip.FileHeader
		want   string
	}{
		{"dot-dot", zip.FileHeader{Name: "onnxruntime/../../evil.py"}, "leads out of the install directory"},
		{"absolute", zip.FileHeader{Name: "/etc/evil.py"}, "an absolute name"},
		{"backslash", zip.FileHeader{Name: `onnxruntime\\win.py`}, "a backslash"},
		{"symbolic link", zip.FileHeader{Name: "onnxruntime/capi/libx.so", CreatorVersion: 3 << 8, ExternalAttrs: 0o120777 << 16}, "a symbolic-link entry"},
		{"deflated directory", zip.FileHeader{Name: "onnxruntime/data/", Method: zip.Deflate}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx := build(t)
			addEntry(t, fx.wheel, c.header)
			out := filepath.Join(t.TempDir(), "out")
			p, err := wheel.Relink(context.Background(), fx.wheel, wheel.Options{ROCm: []string{fx.prefix}, AllowSONAMEChange: true, Output: out})
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), fx.wheel+"!/"+c.header.Name+": ") || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err %v, want a refusal naming the member and saying %q", err, c.want)
				}
				if ents, _ := os.ReadDir(out); len(ents) != 0 {
					t.Errorf("something was written: %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			unzip := testenv.Tool(t, "unzip", "unzip")
			if o, err := exec.Command(unzip, "-tq", p.Output).CombinedOutput(); err != nil {
				t.Fatalf("unzip -t rejects the relinked wheel: %v\n%s", err, o)
			}
			pythonChecks(t, fx, p.Output)
		})
	}
}

// addEntry adds an entry before the wheel's RECORD: a directory entry
// with an empty deflate stream's two bytes, any other entry holding
// "x" (stored), listed in RECORD.
func addEntry(t *testing.T, whl string, h zip.FileHeader) {
	t.Helper()
	zr, err := zip.OpenReader(whl)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, zf := range zr.File {
		data := content(t, zf)
		if strings.HasSuffix(zf.Name, ".dist-info/RECORD") {
			if !strings.HasSuffix(h.Name, "/") {
				data = append([]byte(h.Name+","+record.Hash([]byte("x"))+",1\n"), data...)
			}
			hh := h
			if strings.HasSuffix(h.Name, "/") {
				// archive/zip writes no data for a directory: written
				// under another name of the same length, renamed below.
				hh.Name = strings.TrimSuffix(h.Name, "/") + "_"
				hh.CompressedSize64, hh.UncompressedSize64 = 2, 0
				w, err := zw.CreateRaw(&hh)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte{3, 0}) // an empty final fixed-Huffman block
			} else {
				w, err := zw.CreateHeader(&hh)
				if err != nil {
					t.Fatal(err)
				}
				w.Write([]byte("x"))
			}
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: zf.Name, Method: zf.Method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if strings.HasSuffix(h.Name, "/") {
		b = bytes.ReplaceAll(b, []byte(strings.TrimSuffix(h.Name, "/")+"_"), []byte(h.Name))
	}
	if err := os.WriteFile(whl, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// An extension module is bound as the interpreter that imports it loads
// it: only what the interpreter exports (the Py* API) is left to it. (a)
// A module that needs rocsparse_v2_spmv, which the target's
// librocsparse.so.0 lacks, is refused naming the symbol (relink wrote the
// wheel and the import failed with "undefined symbol: rocsparse_v2_spmv");
// without an interpreter to bind against it is a note, as before. (b) One
// that resolves completely is written, installs with pip and imports.
func TestRelinkExtensionModuleAgainstInterpreter(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	py := testenv.Python(t, "venv", "python3-venv")
	// (sys.executable: python3 on PATH may be a version manager's shim.)
	conf, err := exec.Command(py, "-c", "import sys, sysconfig as s; print(sys.executable); print(s.get_paths()['include']); print(s.get_config_var('EXT_SUFFIX'))").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(conf)), "\n")
	py, inc, suffix := lines[0], lines[1], lines[2]
	if _, err := os.Stat(filepath.Join(inc, "Python.h")); err != nil {
		testenv.Missing(t, "Python.h", "apt-get install python3-dev")
	}
	dir := t.TempDir()
	target, stage := filepath.Join(dir, "target"), filepath.Join(dir, "stage")
	ccLib(t, gcc, filepath.Join(target, "librocsparse.so.0"), "librocsparse.so.0", "int rocsparse_create(void){return 5;}\n")
	ccLib(t, gcc, filepath.Join(stage, "librocsparse.so.1"), "librocsparse.so.1", "int rocsparse_create(void){return 6;}\nint rocsparse_v2_spmv(void){return 1;}\n")
	ext := `#include <Python.h>
extern int rocsparse_create(void);
%s
static PyObject *f(PyObject *self, PyObject *args) { return PyLong_FromLong(rocsparse_create()%s); }
static PyMethodDef methods[] = {{"f", f, METH_NOARGS, ""}, {0}};
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_ext", 0, -1, methods};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&def); }
`
	for _, c := range []struct {
		name     string
		needs    bool
		python   string
		refused  bool
		imported string
	}{
		{"needs a symbol the target lacks", true, py, true, ""},
		{"no interpreter to bind against", true, "", false, ""},
		{"resolves", false, py, false, "5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(ext, "", "")
			if c.needs {
				src = fmt.Sprintf(ext, "extern int rocsparse_v2_spmv(void);", "+rocsparse_v2_spmv()")
			}
			mod := filepath.Join(t.TempDir(), "_ext"+suffix)
			ccLib(t, gcc, mod, "_ext"+suffix, src, "-I"+inc, filepath.Join(stage, "librocsparse.so.1"))
			b, _ := os.ReadFile(mod)
			whl := filepath.Join(t.TempDir(), "pkg-1.0-cp311-cp311-linux_x86_64.whl")
			files := map[string][]byte{
				"pkg/__init__.py":            nil,
				"pkg/_ext" + suffix:          b,
				"pkg-1.0.dist-info/METADATA": []byte("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"),
				"pkg-1.0.dist-info/WHEEL":    []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
			}
			writeWheel(t, whl, []string{"pkg/__init__.py", "pkg/_ext" + suffix, "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL", "pkg-1.0.dist-info/RECORD"}, files, func(string) bool { return false })
			out := filepath.Join(t.TempDir(), "out")
			p, err := wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{target}, AllowSONAMEChange: true, Output: out, Python: c.python})
			if c.refused {
				if !errors.Is(err, wheel.ErrRefused) {
					t.Fatalf("err = %v, want a refusal", err)
				}
				var names []string
				for _, f := range p.Findings {
					if f.Severity == finding.SeverityError {
						names = append(names, f.Symbol)
					}
				}
				if !slices.Contains(names, "rocsparse_v2_spmv") || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "Py") }) {
					t.Errorf("error findings name %v, want rocsparse_v2_spmv and no Py* name", names)
				}
				if ents, _ := os.ReadDir(out); len(ents) != 0 {
					t.Errorf("a refused relink wrote %v", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.imported == "" {
				return
			}
			venv := filepath.Join(t.TempDir(), "venv")
			if o, err := exec.Command(py, "-m", "venv", venv).CombinedOutput(); err != nil {
				testenv.Missing(t, "python3 venv ("+strings.TrimSpace(string(o))+")", "apt-get install python3-venv")
			}
			if o, err := exec.Command(filepath.Join(venv, "bin", "pip"), "install", "--no-index", "--disable-pip-version-check", p.Output).CombinedOutput(); err != nil {
				t.Fatalf("pip install: %v\n%s", err, o)
			}
			o, err := exec.Command(filepath.Join(venv, "bin", "python"), "-c", "import pkg._ext; print(pkg._ext.f())").CombinedOutput()
			if err != nil || strings.TrimSpace(string(o)) != c.imported {
				t.Fatalf("import: %v %s, want %s", err, o, c.imported)
			}
		})
	}
}

// A CPU-only library (libm, libc, RUNPATH $ORIGIN) relinked at a target
// that is the system's own directory needs no new directory: its RUNPATH
// is left alone ("$ORIGIN:/usr/lib/x86_64-linux-gnu" was written), it is
// not edited, and every entry of the new wheel but RECORD is the old one
// byte for byte (header fields, extra fields, data).
func TestRelinkChangesNothingItNeedNot(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	sysDir := "/usr/lib/x86_64-linux-gnu"
	if _, err := os.Stat(filepath.Join(sysDir, "libm.so.6")); err != nil {
		testenv.Missing(t, sysDir+"/libm.so.6", "libc6")
	}
	dir := t.TempDir()
	lib := ccLib(t, gcc, filepath.Join(dir, "libcpu.so"), "libcpu.so", "#include <math.h>\ndouble cpu(double x){return sqrt(x);}\n", "-lm", "-Wl,--enable-new-dtags,-rpath,$ORIGIN")
	b, _ := os.ReadFile(lib)
	whl := filepath.Join(dir, "in", "cpu-1.0-cp311-cp311-linux_x86_64.whl")
	files := map[string][]byte{
		"cpu/__init__.py":            []byte("# cpu\n"),
		"cpu/libcpu.so":              b,
		"cpu-1.0.dist-info/METADATA": []byte("Metadata-Version: 2.1\nName: cpu\nVersion: 1.0\n"),
		"cpu-1.0.dist-info/WHEEL":    []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
	}
	writeWheel(t, whl, []string{"cpu/__init__.py", "cpu/libcpu.so", "cpu-1.0.dist-info/METADATA", "cpu-1.0.dist-info/WHEEL", "cpu-1.0.dist-info/RECORD"}, files, func(string) bool { return false })
	out := filepath.Join(dir, "out")
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{sysDir}, Output: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range p.Files {
		if len(fp.Edits) != 0 || fp.NewRunPath != fp.OldRunPath {
			t.Errorf("%s: edits %v, RUNPATH %q -> %q", fp.Path, fp.Edits, fp.OldRunPath, fp.NewRunPath)
		}
	}
	// The stored bytes of every entry but RECORD: local header, extra
	// fields, data, data descriptor.
	ra, rb := localRecords(t, whl), localRecords(t, p.Output)
	for name, rec := range ra.records {
		if !strings.HasSuffix(name, "/RECORD") && !bytes.Equal(rec, rb.records[name]) {
			t.Errorf("%s: stored bytes changed", name)
		}
	}
	before, after := readZip(t, whl), readZip(t, p.Output)
	for name, a := range before {
		if strings.HasSuffix(name, "/RECORD") {
			continue
		}
		z := after[name]
		if z == nil {
			t.Errorf("%s is gone", name)
			continue
		}
		ha, hz := a.FileHeader, z.FileHeader
		if ha.Method != hz.Method || ha.CRC32 != hz.CRC32 || ha.CompressedSize64 != hz.CompressedSize64 || !bytes.Equal(ha.Extra, hz.Extra) || !ha.Modified.Equal(hz.Modified) {
			t.Errorf("%s: header changed", name)
		}
		ra, _ := a.OpenRaw()
		rz, _ := z.OpenRaw()
		da, _ := io.ReadAll(ra)
		dz, _ := io.ReadAll(rz)
		if !bytes.Equal(da, dz) {
			t.Errorf("%s: data changed", name)
		}
	}
}

// Findings and notes name the wheel's members as WHEEL!/member, never
// the staged copy in the work directory (the fix of a missing version,
// "rebuild $TMPDIR/rocmdoctor-wheel-…/pkg/libuser.so …", named a file that
// is gone when the command ends).
func TestRelinkNamesMembersNotStagedCopies(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(s), 0o644)
		return p
	}
	target := filepath.Join(dir, "target")
	v1 := write("v1.map", "V1 { global: bar; local: *; };\n")
	v2 := write("v2.map", "V1 { global: bar; local: *; };\nV2 { global: baz; } V1;\n")
	ccLib(t, gcc, filepath.Join(target, "libv.so.1"), "libv.so.1", "int bar(void){return 1;}\n", "-Wl,--version-script,"+v1)
	built := ccLib(t, gcc, filepath.Join(dir, "build", "libv.so.1"), "libv.so.1", "int bar(void){return 1;}\nint baz(void){return 2;}\n", "-Wl,--version-script,"+v2)
	user := ccLib(t, gcc, filepath.Join(dir, "libuser.so"), "libuser.so", "extern int baz(void);\nint user(void){return baz();}\n", built)
	b, _ := os.ReadFile(user)
	whl := filepath.Join(dir, "in", "pkg-1.0-cp311-cp311-linux_x86_64.whl")
	files := map[string][]byte{
		"pkg/libuser.so":             b,
		"pkg-1.0.dist-info/METADATA": []byte("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"),
		"pkg-1.0.dist-info/WHEEL":    []byte("Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n"),
	}
	writeWheel(t, whl, []string{"pkg/libuser.so", "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL", "pkg-1.0.dist-info/RECORD"}, files, func(string) bool { return false })
	p, err := wheel.Relink(context.Background(), whl, wheel.Options{LibDirs: []string{target}, DryRun: true})
	if p == nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(p)
	if len(p.Findings) == 0 {
		t.Fatalf("no findings: %s", js)
	}
	if bytes.Contains(js, []byte("rocmdoctor-wheel-")) || bytes.Contains(js, []byte(os.TempDir()+"/rocmdoctor")) {
		t.Errorf("the plan names the work directory: %s", js)
	}
	if !bytes.Contains(js, []byte(whl+"!/pkg/libuser.so")) {
		t.Errorf("the plan does not name %s!/pkg/libuser.so: %s", whl, js)
	}
}

// An installed distribution whose package directory is a symbolic link
// (pip install -e, a shared store): the library is rewritten where the
// link leads, and the plan says so; the summary names the directory
// rewritten (it printed "wrote " and nothing).
func TestRelinkInstalledThroughSymlinkedPackage(t *testing.T) {
	gcc := testenv.Tool(t, "gcc", "gcc")
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	ccLib(t, gcc, filepath.Join(target, "libtgt.so.1"), "libtgt.so.1", "int tgt(void){return 1;}\n")
	built := ccLib(t, gcc, filepath.Join(dir, "build", "libtgt.so.1"), "libtgt.so.1", "int tgt(void){return 1;}\n")
	site := filepath.Join(dir, "site-packages")
	store := filepath.Join(dir, "store", "pkg")
	ccLib(t, gcc, filepath.Join(store, "libuse.so"), "libuse.so", "extern int tgt(void);\nint use(void){return tgt();}\n", built)
	os.MkdirAll(site, 0o755)
	if err := os.Symlink(store, filepath.Join(site, "pkg")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(store, "libuse.so"))
	info := filepath.Join(site, "pkg-1.0.dist-info")
	os.MkdirAll(info, 0o755)
	os.WriteFile(filepath.Join(info, "METADATA"), []byte("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"), 0o644)
	os.WriteFile(filepath.Join(info, "RECORD"), []byte(record.Line("pkg/libuse.so", record.Hash(b), int64(len(b)))+"\npkg-1.0.dist-info/RECORD,,\n"), 0o644)
	p, err := wheel.Relink(context.Background(), info, wheel.Options{LibDirs: []string{target}, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Written || p.Output != site {
		t.Errorf("written %v, output %q, want %s", p.Written, p.Output, site)
	}
	if !slices.ContainsFunc(p.Notes, func(n string) bool { return strings.Contains(n, "a symbolic link leads there") }) {
		t.Errorf("notes %q say nothing of the link", p.Notes)
	}
	if after, _ := os.ReadFile(filepath.Join(store, "libuse.so")); bytes.Equal(after, b) {
		t.Errorf("the library behind the link was not rewritten")
	}
	if st, _ := os.Lstat(filepath.Join(site, "pkg")); st.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the package link was replaced")
	}
}
